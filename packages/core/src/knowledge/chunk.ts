/**
 * Splits a document's text into chunks along its structure: a Markdown heading
 * starts a new chunk (and names the chunk's section), paragraphs are packed
 * together up to `maxChars`, and a chunk cut for size begins with the tail of the
 * one before (`overlapChars`), so that a sentence across the cut is found from
 * either side. A paragraph longer than a chunk is cut at sentence ends, then hard.
 */

export interface Chunk {
  /** From 0, in document order. */
  position: number;
  /** The heading path above the chunk, `Guide > Install`, or "" before any heading. */
  heading: string;
  text: string;
}

export interface ChunkOptions {
  maxChars?: number;
  overlapChars?: number;
  /** The most chunks one document may give. */
  maxChunks?: number;
}

export const CHUNK_DEFAULTS = { maxChars: 1_200, overlapChars: 200, maxChunks: 20_000 } as const;

/**
 * @example
 * chunkText("# A\n\none\n\n# B\n\ntwo").map((c) => [c.heading, c.text])
 * // [["A", "# A\n\none"], ["B", "# B\n\ntwo"]]
 */
export function chunkText(text: string, options: ChunkOptions = {}): Chunk[] {
  const maxChars = options.maxChars ?? CHUNK_DEFAULTS.maxChars;
  const overlap = Math.min(
    options.overlapChars ?? CHUNK_DEFAULTS.overlapChars,
    Math.floor(maxChars / 2),
  );
  const maxChunks = options.maxChunks ?? CHUNK_DEFAULTS.maxChunks;
  const chunks: Chunk[] = [];
  const headings: string[] = [];
  let parts: string[] = [];
  let size = 0;

  const emit = () => {
    const body = parts.join("\n\n").trim();
    if (body !== "") {
      if (chunks.length >= maxChunks) {
        throw new RangeError(
          `the document gives more than ${maxChunks.toLocaleString("en-US")} chunks: split it into several documents`,
        );
      }
      chunks.push({ position: chunks.length, heading: headings.join(" > "), text: body });
    }
    parts = [];
    size = 0;
  };

  for (const block of text.split(/\n\s*\n/)) {
    const paragraph = block.trim();
    if (paragraph === "") continue;
    const heading = paragraph.match(/^(#{1,6})\s+(.+)$/m);
    if (heading && paragraph.startsWith("#")) {
      emit();
      const level = heading[1]!.length;
      headings.length = Math.min(headings.length, level - 1);
      headings[level - 1] = heading[2]!.trim();
      // Keep any gap in levels dense: `# A` then `### C` is `A > C`.
      for (let i = 0; i < headings.length; i++) headings[i] ??= "";
      const compact = headings.filter((h) => h !== "");
      headings.length = 0;
      headings.push(...compact);
    }
    for (const piece of pieces(paragraph, maxChars)) {
      if (size > 0 && size + piece.length + 2 > maxChars) {
        const tail = tailOf(parts.join("\n\n"), overlap);
        emit();
        if (tail) {
          parts.push(tail);
          size = tail.length;
        }
      }
      parts.push(piece);
      size += piece.length + 2;
    }
  }
  emit();
  return chunks;
}

/** A paragraph in pieces of at most `max` characters: at sentence ends when it can, else hard. */
function pieces(paragraph: string, max: number): string[] {
  if (paragraph.length <= max) return [paragraph];
  const out: string[] = [];
  let current = "";
  for (const sentence of paragraph.match(/[^.!?\n]+[.!?]*\s*|\n/g) ?? [paragraph]) {
    if (current.length + sentence.length > max && current !== "") {
      out.push(current.trim());
      current = "";
    }
    if (sentence.length > max) {
      for (let i = 0; i < sentence.length; i += max) out.push(sentence.slice(i, i + max).trim());
    } else current += sentence;
  }
  if (current.trim() !== "") out.push(current.trim());
  return out.filter((p) => p !== "");
}

/** The last `chars` of the text, starting at a word boundary. */
function tailOf(text: string, chars: number): string {
  if (chars <= 0 || text.length === 0) return "";
  if (text.length <= chars) return text;
  const tail = text.slice(-chars);
  const space = tail.search(/\s/);
  return (space >= 0 ? tail.slice(space) : tail).trim();
}
