/**
 * The one HTML page of the console, rendered on the server with Hono JSX: it
 * loads the hashed script and stylesheet and says what to do when scripts are
 * off. Everything else is drawn by the client from the public API.
 */
export function ConsoleShell(props: {
  base: string;
  script: string;
  style: string;
  /** Whether the server has an LLM (`none`: the new-task form opens on a plan). */
  llm: "configured" | "none";
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta name="referrer" content="no-referrer" />
        <meta name="stackvm-llm" content={props.llm} />
        <title>StackVM console</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={`${props.base}/assets/${props.style}`} />
        <script type="module" src={`${props.base}/assets/${props.script}`} />
      </head>
      <body>
        <div id="root">
          <noscript>
            <p>
              The StackVM console needs JavaScript. The same data is in the HTTP API: see{" "}
              <a href="/docs">/docs</a>.
            </p>
          </noscript>
        </div>
      </body>
    </html>
  );
}
