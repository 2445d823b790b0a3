/**
 * Whether the console knows the server has no LLM: the page says so
 * (`<meta name="stackvm-llm" content="none">`, written by the server), or the
 * API refused a goal with `llm_not_configured` earlier in this session. Then
 * the new-task form opens on a plan, the one kind of task that can run.
 */

/** The session key set when the API answered `llm_not_configured`. */
export const NO_LLM_KEY = "stackvm.no-llm";

/**
 * @example
 * serverHasNoLlm(document, sessionStorage) // true on a page served with content="none"
 */
export function serverHasNoLlm(
  page: Pick<Document, "querySelector">,
  session: Pick<Storage, "getItem">,
): boolean {
  const meta = page.querySelector('meta[name="stackvm-llm"]');
  return meta?.getAttribute("content") === "none" || session.getItem(NO_LLM_KEY) !== null;
}
