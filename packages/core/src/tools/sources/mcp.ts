/**
 * MCP servers as tool sources. A namespace lists servers (name, URL, headers,
 * an optional allow list of tool names); their tools are called in plans as
 * `server.tool`. The wire is the MCP client port ({@link McpClient}), whose adapter
 * (`packages/aws/src/mcp-client.ts`) speaks Streamable HTTP with the official SDK
 * through `guardedFetch`.
 *
 * - `tools/list` is cached in the server's record (`tools`, `listed_at`) and listed
 *   again when older than {@link MCP_TOOLS_TTL_MS} or on the refresh route;
 * - a call's input is checked against the tool's `inputSchema` before it leaves
 *   (the executor parses it with the tool's zod schema);
 * - `structuredContent` becomes the value; else the text (one text item), or the
 *   list of items; images, audio and embedded blobs go to the blob store and the
 *   value holds their reference;
 * - `isError` is a step error (which may trigger a plan update); a server that
 *   does not answer is a step error that names it;
 * - headers named secret are sealed at rest ({@link SecretBox}) and opened only
 *   here, for the request; they never reach a commit, a log line or an answer.
 */
import * as z from "zod";
import { StepError } from "../../errors";
import type { OutboundPolicy } from "../../net/outbound-policy";
import type { SecretBox, SecretContext } from "../../ports/secrets";
import type { ToolRecord, ToolSource } from "../registry";
import type { Tool, ToolContext } from "../tool";
import { schemaOf } from "./http-tool";

/** How long a server's `tools/list` is trusted before it is listed again. */
export const MCP_TOOLS_TTL_MS = 5 * 60 * 1000;

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

/** What the MCP source needs from the system. */
export interface McpSourceDeps {
  client: McpClient;
  secrets: SecretBox;
  now(): number;
  /** What the server's address may be (the operator's open ranges, the stack's own ports). */
  outbound: OutboundPolicy;
  /** Saves a fresh `tools/list` in the server's record. */
  saveTools(
    tenant: string,
    namespace: string,
    server: string,
    tools: McpToolInfo[],
    listedAt: string,
  ): Promise<void>;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** The secret box context of one header of one server: bound to the sealed value. */
export const secretContext = (
  tenant: string,
  namespace: string,
  server: string,
  header: string,
): SecretContext => ({
  purpose: "mcp-header",
  tenant,
  namespace,
  name: `${server}|${header.toLowerCase()}`,
});

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
}

/** The connection to a server, with its secret headers opened. */
export async function mcpConnection(
  tenant: string,
  namespace: { name: string; allowed_hosts: readonly string[] },
  record: McpServerRecord,
  deps: Pick<McpSourceDeps, "secrets" | "outbound" | "timeoutMs" | "maxResponseBytes">,
  idempotencyKey?: string,
): Promise<McpConnection> {
  const secret = new Set(record.secret_headers.map((h) => h.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers)) {
    headers[name] = secret.has(name.toLowerCase())
      ? await deps.secrets.open(value, secretContext(tenant, namespace.name, record.name, name))
      : value;
  }
  return {
    server: record.name,
    url: record.url,
    headers,
    allowedHosts: namespace.allowed_hosts,
    policy: deps.outbound,
    ...(idempotencyKey ? { idempotencyKey } : {}),
    timeoutMs: deps.timeoutMs ?? 15_000,
    maxResponseBytes: deps.maxResponseBytes ?? 1024 * 1024,
  };
}

/** The tools a server's record gives, its allow list applied. */
export function allowedMcpTools(record: McpServerRecord): McpToolInfo[] {
  return record.allow === null
    ? record.tools
    : record.tools.filter((t) => record.allow!.includes(t.name));
}

/** The registry's source of MCP tools. */
export function mcpToolSource(deps: McpSourceDeps): ToolSource {
  return {
    kind: "mcp",
    async tools(tenant, namespace, raw) {
      let record = raw as McpServerRecord;
      const listedAt = record.listed_at ? Date.parse(record.listed_at) : 0;
      if (deps.now() - listedAt > MCP_TOOLS_TTL_MS) {
        try {
          const connection = await mcpConnection(tenant, namespace, record, deps);
          const tools = await deps.client.listTools(connection);
          const at = new Date(deps.now()).toISOString();
          await deps.saveTools(tenant, namespace.name, record.name, tools, at);
          record = { ...record, tools, listed_at: at };
        } catch {
          // The cached list stands: a server that is down now still has its tools
          // known, and a call of one fails with a step error that names the server.
        }
      }
      return allowedMcpTools(record).map((info) => mcpTool(tenant, namespace, record, info, deps));
    },
  };
}

function mcpTool(
  tenant: string,
  namespace: { name: string; allowed_hosts: readonly string[] },
  record: McpServerRecord,
  info: McpToolInfo,
  deps: McpSourceDeps,
): Tool<Record<string, unknown>> {
  const name = `${record.name}.${info.name}`;
  let input: z.ZodType;
  try {
    input = schemaOf(info.input_schema, `the MCP tool '${name}'`);
  } catch {
    // A schema zod cannot read: the server still checks the input itself.
    input = z.record(z.string(), z.unknown());
  }
  return {
    name,
    description: info.description || `The tool '${info.name}' of the MCP server '${record.name}'.`,
    input: input as z.ZodType<Record<string, unknown>>,
    source: "mcp",
    inputSchema: info.input_schema,
    async run(args, context) {
      const connection = await mcpConnection(
        tenant,
        namespace,
        record,
        deps,
        context.idempotencyKey,
      );
      const result = await deps.client.callTool(connection, info.name, args);
      if (result.isError) {
        const text = result.content
          .flatMap((c) => (c.type === "text" ? [c.text] : []))
          .join(" ")
          .slice(0, 1000);
        throw new StepError(
          "mcp_tool_error",
          `the MCP tool '${name}' answered an error: ${text || "(no message)"}`,
          { server: record.name, tool: info.name },
        );
      }
      return {
        value: await mcpValue(result, context),
        details: { mcp_server: record.name, mcp_tool: info.name },
      };
    },
  };
}

/** The value of a tool's answer: structured content, the text, or the items with blobs stored. */
export async function mcpValue(result: McpCallResult, context: ToolContext): Promise<unknown> {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const items = await Promise.all(result.content.map((item) => contentValue(item, context)));
  if (items.length === 1 && typeof items[0] === "string") return items[0];
  if (items.length === 0) return null;
  return items;
}

async function contentValue(item: McpContent, context: ToolContext): Promise<unknown> {
  switch (item.type) {
    case "text":
      return item.text;
    case "image":
    case "audio": {
      const ref = await context.blobs.put(
        context.blobPrefix,
        Buffer.from(item.data, "base64"),
        item.mimeType,
      );
      return { type: item.type, mime_type: item.mimeType, blob: ref };
    }
    case "resource": {
      const { uri, mimeType, text, blob } = item.resource;
      if (blob === undefined)
        return { type: "resource", uri, mime_type: mimeType ?? null, text: text ?? "" };
      const ref = await context.blobs.put(
        context.blobPrefix,
        Buffer.from(blob, "base64"),
        mimeType ?? "application/octet-stream",
      );
      return { type: "resource", uri, mime_type: mimeType ?? null, blob: ref };
    }
    case "resource_link":
      return {
        type: "resource_link",
        uri: item.uri,
        name: item.name ?? null,
        mime_type: item.mimeType ?? null,
      };
  }
}
