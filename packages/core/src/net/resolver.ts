/** Name resolution for outbound requests, injected so that tests can answer for any host. */
import type { LookupAddress } from "node:dns";
import { StepError } from "../errors";

/** Resolves a host name to every address it has (as `dns.lookup` with `all: true`). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo, so /etc/hosts counts), with every address. */
export const systemResolver: Resolver = async (hostname) => {
  // Imported with the first lookup: a cold start that makes no outgoing request need not load it.
  const dns = (await import("node:dns")).promises;
  try {
    return await dns.lookup(hostname, { all: true, order: "verbatim" });
  } catch (error) {
    const code = (error as { code?: string }).code ?? "unknown";
    throw new StepError("http_error", `could not resolve host '${hostname}' (${code})`, {
      host: hostname,
    });
  }
};
