/**
 * Host allow-lists (a namespace's `allowed_hosts`). An entry is an exact host
 * (`api.example.com`, `203.0.113.7`, `::1`) or a wildcard for subdomains
 * (`*.example.com` matches `a.example.com` and `a.b.example.com`, not
 * `example.com`). Matching ignores case and a trailing dot. No entry, no host.
 */
import ipaddr from "ipaddr.js";

/**
 * Puts a host in the form entries are compared in: lower case, no brackets around
 * an IPv6 literal, no trailing dot, IP literals in their canonical spelling.
 */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (ipaddr.isValid(h)) return ipaddr.parse(h).toString();
  return h;
}

/**
 * Returns the entry of `patterns` that allows `hostname`, or undefined.
 *
 * @example
 * matchHost("api.github.com", ["*.github.com"]) // "*.github.com"
 * matchHost("github.com", ["*.github.com"]) // undefined
 */
export function matchHost(hostname: string, patterns: readonly string[]): string | undefined {
  const host = normalizeHost(hostname);
  return patterns.find((pattern) => {
    const p = pattern.trim().toLowerCase();
    if (p.startsWith("*.")) {
      const suffix = normalizeHost(p.slice(1));
      return host.endsWith(suffix) && host.length > suffix.length;
    }
    return normalizeHost(p) === host;
  });
}

/** True for `localhost`, `*.localhost` names, 127.0.0.0/8 and ::1 (in any spelling). */
export function isLoopbackHost(hostname: string): boolean {
  const host = normalizeHost(hostname);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === "loopback";
}

/**
 * Says what is wrong with an allow-list entry, or null when it is fine. For the
 * namespace API, so that `https://api.example.com/` is refused with a hint rather
 * than silently matching nothing.
 *
 * @example
 * hostPatternProblem("https://api.example.com") // "... write the host alone: 'api.example.com'"
 */
export function hostPatternProblem(pattern: string): string | null {
  const p = pattern.trim();
  if (p.includes("://") || p.includes("/")) {
    const host = URL.canParse(p) ? new URL(p).hostname : p;
    return `'${pattern}' is not a host: write the host alone, without scheme or path (for example '${host}')`;
  }
  const bare = p.startsWith("*.") ? p.slice(2) : p;
  if (ipaddr.isValid(normalizeHost(bare))) return null;
  if (
    !/^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i.test(
      bare,
    )
  ) {
    return `'${pattern}' is not a host name: use a name like 'api.example.com', a wildcard like '*.example.com', or an IP address`;
  }
  return null;
}
