/**
 * Colours and the spinner only for a person at a terminal: when stdout is not a
 * TTY (a pipe, a file, a test), output is plain text, and `NO_COLOR` turns
 * colours off everywhere.
 */
import { styleText } from "node:util";
import yoctoSpinner from "yocto-spinner";
import { neutralizeBidi } from "./bidi";
import { neutralizeControls, type Paint } from "./controls";

export interface Out {
  /** True when stdout is a terminal. */
  tty: boolean;
  /** The terminal's width in columns; when the stream is not a terminal, `COLUMNS` or 80. */
  columns: number;
  paint(style: Paint, text: string): string;
  line(text?: string): void;
  /** Writes text as it is, no newline (an answer as it is written). */
  write(text: string): void;
  /** Shows `text` next to a spinner until the next line is printed (TTY only). */
  wait(text: string): void;
  /** Stops the spinner. */
  done(): void;
}

/** Streams whose reader may close early, already watched (`createOut` may run more than once). */
const watched = new WeakSet<NodeJS.WriteStream>();

/**
 * `stackvm tasks | head -1`: the reader closed after what it wanted. Like any
 * Unix filter, stop there quietly (exit 0) rather than print a `write EPIPE`
 * stack trace; any other write error is still thrown.
 */
function endOnClosedPipe(stream: NodeJS.WriteStream): void {
  if (watched.has(stream)) return;
  watched.add(stream);
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

export function createOut(stream: NodeJS.WriteStream = process.stdout): Out {
  endOnClosedPipe(stream);
  const tty = stream.isTTY === true;
  const color = tty && !process.env.NO_COLOR;
  let spinner: ReturnType<typeof yoctoSpinner> | null = null;
  // Names, values and streamed text from the API: a right-to-left override must
  // not reverse them, and a terminal must not act on their escape sequences.
  const shown = (text: string) => neutralizeBidi(neutralizeControls(text, { colours: color }));
  const out: Out = {
    tty,
    // Read at each use: the terminal may have been resized. Not a terminal: COLUMNS, or 80.
    get columns() {
      if (tty && stream.columns > 0) return stream.columns;
      const asked = Number(process.env.COLUMNS);
      return Number.isInteger(asked) && asked > 0 ? asked : 80;
    },
    paint: (style, text) => (color ? styleText(style, text, { validateStream: false }) : text),
    // The spinner hooks the stream: it clears itself before a line and redraws after.
    line(text = "") {
      stream.write(`${shown(text)}\n`);
    },
    write(text) {
      stream.write(shown(text));
    },
    wait(text) {
      if (!tty) return;
      if (!spinner) {
        spinner = yoctoSpinner({
          text: shown(text),
          stream,
          handleSignals: false,
        }).start();
      } else spinner.text = shown(text);
    },
    done() {
      spinner?.stop();
      spinner = null;
    },
  };
  return out;
}
