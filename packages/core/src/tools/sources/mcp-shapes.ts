/**
 * The shapes of MCP servers: as a tenant defines one, as it is stored and shown,
 * and what the adapter that speaks the protocol takes and gives.
 */
import * as z from "zod";
import type { OutboundPolicy } from "../../net/outbound-policy";
import type { ToolRecord } from "../registry";

/** A tool as an MCP server lists it. */
export const McpToolInfo = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type McpToolInfo = z.infer<typeof McpToolInfo>;

/** The body of `POST /v1/namespaces/{name}/mcp-servers`. */
export const McpServerDefinition = z
  .object({
    name: z.string().regex(/^[a-z0-9_-]{1,32}$/, "a server name is 1 to 32 of a-z, 0-9, _ and -"),
    url: z.url({ protocol: /^https?$/, error: "url must be an absolute https:// URL" }).max(2048),
    headers: z
      .record(
        z
          .string()
          .regex(
            /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/,
            "a header name is a token like 'Authorization'",
          ),
        z
          .string()
          .max(8192)
          .regex(/^[^\r\n]*$/, "a header value is one line"),
      )
      .refine((h) => Object.keys(h).length <= 20, "at most 20 headers")
      .default({}),
    secret_headers: z.array(z.string()).max(20).default([]),
    tools: z.array(z.string().min(1).max(128)).max(200).optional(),
  })
  .strict()
  .superRefine((server, ctx) => {
    const names = new Set(Object.keys(server.headers).map((h) => h.toLowerCase()));
    for (const secret of server.secret_headers) {
      if (!names.has(secret.toLowerCase())) {
        ctx.addIssue({
          code: "custom",
          path: ["secret_headers"],
          message: `secret_headers names '${secret}', which is not in headers: give its value in headers`,
        });
      }
    }
  });
export type McpServerDefinition = z.infer<typeof McpServerDefinition>;

/** A server as the API shows it: secret header values as `***`. */
export const McpServer = z.object({
  name: z.string(),
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  tools: z.array(McpToolInfo),
  listed_at: z.string().nullable(),
});
export type McpServer = z.infer<typeof McpServer>;

/** One connection's settings, as the adapter needs them. */
export interface McpConnection {
  /** The server's name, for messages. */
  server: string;
  url: string;
  /** Every header, secrets opened. */
  headers: Record<string, string>;
  allowedHosts: readonly string[];
  /** The address policy every connection is checked against (`OutboundPolicy`). */
  policy: OutboundPolicy;
  /** The step's idempotency key, sent as `Idempotency-Key` on every request of a call. */
  idempotencyKey?: string;
  timeoutMs: number;
  maxResponseBytes: number;
}

/** A content item of a tool's answer (the MCP `content` array). */
export type McpContent =
  | { type: "text"; text: string }
  | { type: "image" | "audio"; data: string; mimeType: string }
  | {
      type: "resource";
      resource: { uri: string; mimeType?: string; text?: string; blob?: string };
    }
  | { type: "resource_link"; uri: string; name?: string; mimeType?: string };

export interface McpCallResult {
  content: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The MCP client port. Failures to reach the server or to speak with it throw
 * `StepError("mcp_unreachable")` naming the server; a refused address throws the
 * guard's own `address_forbidden` or `host_not_allowed`.
 */
export interface McpClient {
  listTools(connection: McpConnection): Promise<McpToolInfo[]>;
  callTool(
    connection: McpConnection,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<McpCallResult>;
}

/** A stored server record's fields. */
export interface McpServerRecord extends ToolRecord {
  kind: "mcp";
  url: string;
  /** Plain values; secret ones are sealed. */
  headers: Record<string, string>;
  secret_headers: string[];
  allow: string[] | null;
  tools: McpToolInfo[];
  listed_at: string | null;
  /** True when the secret headers were sealed with the URL in their context (all new records). */
  secrets_bound_to_url?: boolean;
}
