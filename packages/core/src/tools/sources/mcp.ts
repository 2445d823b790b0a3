/**
 * MCP servers as tool sources. A namespace lists servers (name, URL, headers,
 * an optional allow list of tool names); their tools are called in plans as
 * `server.tool`. The wire is the MCP client port ({@link McpClient}), whose adapter
 * (`packages/aws/src/mcp-client.ts`) speaks Streamable HTTP with the official SDK
 * through `guardedFetch`.
 *
 * - `tools/list` is cached in the server's record (`tools`, `listed_at`) and listed
 *   again when older than {@link MCP_TOOLS_TTL_MS} by the worker, when a step calls
 *   one of its tools, or on the refresh route; never on the API's request path
 *   (submit, validate and the tool list answer from the record);
 * - a listing that names a tool twice, or gives a callable tool an `inputSchema`
 *   out of bounds, is refused ({@link listingError}: at registration and refresh
 *   422 `mcp_duplicate_tool` or `invalid_schema`; on a relist the stored list
 *   stands and the refusal is logged), and a stored list is read first-name-wins,
 *   so one server cannot break its namespace; a schema stored before the bounds
 *   leaves the input to the server's own check;
 * - calls in flight are limited per tenant and per server ({@link McpCallLimiter}),
 *   and one call (connect, request, session end) has one deadline in all;
 * - a call's input is checked against the tool's `inputSchema` before it leaves
 *   (the executor parses it with the tool's zod schema);
 * - `structuredContent` becomes the value; else the text (one text item), or the
 *   list of items; images, audio and embedded blobs go to the blob store and the
 *   value holds their reference;
 * - `isError` is a step error (which may trigger a plan update); a server that
 *   does not answer is a step error that names it;
 * - headers named secret are sealed at rest ({@link SecretBox}), bound to the
 *   tenant, namespace, server, header and the server's URL, and opened only here,
 *   for the request; they never reach a commit, a log line or an answer. A record
 *   whose URL was changed does not open them.
 */
import * as z from "zod";
import { StepError } from "../../errors";
import { loadJsonSchemaCompiler } from "../../json-schema/compile";
import type { OutboundPolicy } from "../../net/outbound-policy";
import type { Log } from "../../ports/log";
import type { SecretBox, SecretContext } from "../../ports/secrets";
import type { ToolSource, ToolSourceOptions } from "../registry";
import type { Tool, ToolContext } from "../tool";
import { schemaOf } from "./http-tool";
import type { McpCallLimiter } from "./mcp-limits";
import { listingError } from "./mcp-listing";
import type {
  McpCallResult,
  McpClient,
  McpConnection,
  McpContent,
  McpServerRecord,
  McpToolInfo,
} from "./mcp-shapes";

/** How long a server's `tools/list` is trusted before it is listed again. */
export const MCP_TOOLS_TTL_MS = 5 * 60 * 1000;

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
  /** The most time one call or listing may take, all its requests together (15 s). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Calls in flight per tenant and per server; none: no limit (unit tests). */
  limiter?: McpCallLimiter;
  /** Where a relist that was not taken is told; none: not told (unit tests). */
  log?: Log;
}

/**
 * The secret box context of one header of one server: bound to the sealed value.
 * `url` is the server's URL, so that a record whose URL is changed cannot send
 * the secret elsewhere; records sealed before the URL was bound (no
 * `secrets_bound_to_url`) open without it.
 */
export const secretContext = (
  tenant: string,
  namespace: string,
  server: string,
  header: string,
  url?: string,
): SecretContext => ({
  purpose: "mcp-header",
  tenant,
  namespace,
  name: `${server}|${header.toLowerCase()}`,
  ...(url === undefined ? {} : { url }),
});

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
  const url = record.secrets_bound_to_url ? record.url : undefined;
  for (const [name, value] of Object.entries(record.headers)) {
    if (!secret.has(name.toLowerCase())) {
      headers[name] = value;
      continue;
    }
    try {
      headers[name] = await deps.secrets.open(
        value,
        secretContext(tenant, namespace.name, record.name, name, url),
      );
    } catch {
      throw new StepError(
        "mcp_secret_unopenable",
        `the secret header '${name}' of the MCP server '${record.name}' does not open for ${record.url}: it was sealed for another URL, namespace or key. Nothing was sent; delete the server and add it again with its headers`,
        { server: record.name },
      );
    }
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
    async tools(tenant, namespace, raw, options?: ToolSourceOptions) {
      // Each tool's input is checked against its inputSchema.
      await loadJsonSchemaCompiler();
      let record = raw as McpServerRecord;
      const listedAt = record.listed_at ? Date.parse(record.listed_at) : 0;
      // Only a step's call lists again (the worker, within the call limits); the
      // API answers from the record and never waits on the server.
      const release =
        options?.refresh && deps.now() - listedAt > MCP_TOOLS_TTL_MS
          ? (deps.limiter?.tryAcquire(tenant, serverKey(tenant, namespace.name, record.name)) ??
            (deps.limiter ? null : () => {}))
          : null;
      if (release) {
        try {
          const connection = await mcpConnection(tenant, namespace, record, deps);
          const tools = await deps.client.listTools(connection);
          // A listing refused at registration is not taken here either: the stored list stands.
          const refused = listingError(record, tools);
          if (refused) {
            deps.log?.warn("an MCP server's new tool list was refused; its stored list stands", {
              tenant_id: tenant,
              namespace: namespace.name,
              server: record.name,
              code: refused.code,
              reason: refused.message,
            });
          } else {
            const at = new Date(deps.now()).toISOString();
            await deps.saveTools(tenant, namespace.name, record.name, tools, at);
            record = { ...record, tools, listed_at: at };
          }
        } catch {
          // The cached list stands: a server that is down now still has its tools
          // known, and a call of one fails with a step error that names the server.
        } finally {
          release();
        }
      }
      const seen = new Set<string>();
      return allowedMcpTools(record)
        .filter((info) => !seen.has(info.name) && seen.add(info.name))
        .map((info) => mcpTool(tenant, namespace, record, info, deps));
    },
  };
}

/** The limiter's key of one server of one namespace. */
const serverKey = (tenant: string, namespace: string, server: string): string =>
  `${tenant}|${namespace}|${server}`;

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
    // A schema stored before listings were held to the bounds (registration now
    // refuses it): the server still checks the input itself.
    input = z.record(z.string(), z.unknown());
  }
  return {
    name,
    description: info.description || `The tool '${info.name}' of the MCP server '${record.name}'.`,
    input: input as z.ZodType<Record<string, unknown>>,
    source: "mcp",
    inputSchema: info.input_schema,
    async run(args, context) {
      // The place first: a call over a limit goes back to the queue before any secret is opened.
      const release =
        deps.limiter?.acquire(
          tenant,
          serverKey(tenant, namespace.name, record.name),
          record.name,
        ) ?? (() => {});
      let result: McpCallResult;
      try {
        const connection = await mcpConnection(
          tenant,
          namespace,
          record,
          deps,
          context.idempotencyKey,
        );
        result = await deps.client.callTool(connection, info.name, args);
      } finally {
        release();
      }
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
