/**
 * The secret box port: seals the secrets of tool sources (an MCP server's
 * `Authorization` header) before they are stored, and opens them in the worker
 * when a call needs them. `context` names what the secret belongs to and is
 * bound to the sealed text, so a sealed value copied into another tenant's or
 * another namespace's record does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: SecretContext): Promise<string>;
  /** @throws Error when the sealed text was not made by this box for this context. */
  open(sealed: string, context: SecretContext): Promise<string>;
}

/** What a secret belongs to: each field is bound to its sealed text. */
export interface SecretContext {
  /** What kind of secret it is, e.g. `mcp-header`. */
  purpose: string;
  tenant: string;
  namespace: string;
  /** Its place in the namespace, e.g. `{server}|{header}`. */
  name: string;
  /**
   * Where the secret may be sent (an MCP server's URL): a record whose URL is
   * changed does not open it. Absent in contexts sealed before it existed.
   */
  url?: string;
}

/**
 * The context as one text, `{purpose}|{tenant}|{namespace}|{name}`, then
 * `|{url}` when it has one (the local box's additional data; a context without
 * a URL gives the same text as before URLs were bound, so old seals open).
 */
export const secretContextText = (context: SecretContext): string =>
  `${context.purpose}|${context.tenant}|${context.namespace}|${context.name}${context.url === undefined ? "" : `|${context.url}`}`;
