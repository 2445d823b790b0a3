/**
 * How the console writes numbers, times and sizes: short, and exact on hover.
 */

/** "12 s ago", "3 min ago", "5 h ago", "2 d ago"; the date beyond a month. */
export function age(iso: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  if (seconds < 30 * 86_400) return `${Math.floor(seconds / 86_400)} d ago`;
  return iso.slice(0, 10);
}

/** A timestamp as the reader's local date and time. */
export function when(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** "$0.0123"; four decimals below a dollar, since one step costs fractions of a cent. */
export function usd(value: number): string {
  if (value === 0) return "$0";
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** "1,234" or "12.3k". */
export function count(value: number): string {
  return value < 10_000 ? value.toLocaleString("en-US") : `${(value / 1000).toFixed(1)}k`;
}

/** "850 ms" or "2.4 s". */
export function ms(value: number): string {
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
}

/** A value in one line, cut to `max` characters. */
export function oneLine(value: unknown, max = 80): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The short form of an id, for lists. */
export function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 12)}…` : id;
}
