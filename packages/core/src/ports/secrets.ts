/**
 * The secret box port: seals the secrets of tool sources (an MCP server's
 * `Authorization` header) before they are stored, and opens them in the worker
 * when a call needs them. `context` names what the secret belongs to (tenant,
 * namespace, source, header) and is bound to the sealed text, so a sealed value
 * copied into another tenant's record does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): Promise<string>;
  /** @throws Error when the sealed text was not made by this box for this context. */
  open(sealed: string, context: string): Promise<string>;
}
