/**
 * A namespace's HTTP tools and MCP servers: their routes' service. Records live
 * beside the namespace's code tools (`NamespaceService.putToolRecord`), so one
 * query reads every tool a namespace owns. Secret headers are sealed before they
 * are stored and shown as `***`; a refused definition leaves nothing behind.
 */
import { NotFoundError, ValidationError } from "../errors";
import { loadJsonSchemaCompiler } from "../json-schema/compile";
import type { OutboundPolicy } from "../net/outbound-policy";
import type { Clock } from "../ports/clock";
import type { SecretBox } from "../ports/secrets";
import { mcpRecordKey, type ToolDescription } from "../tools/registry";
import { type HttpToolDefinition, httpTool, toolUrlProblem } from "../tools/sources/http-tool";
import { mcpConnection, secretContext } from "../tools/sources/mcp";
import { listingError } from "../tools/sources/mcp-listing";
import type {
  McpClient,
  McpServer,
  McpServerDefinition,
  McpServerRecord,
  McpToolInfo,
} from "../tools/sources/mcp-shapes";
import type { NamespaceService } from "./namespaces";

export interface ToolSourceServiceDeps {
  namespaces: NamespaceService;
  clock: Clock;
  secrets: SecretBox;
  mcp: McpClient;
  /** What outgoing requests may reach: URLs it refuses are refused when registered. */
  outbound: OutboundPolicy;
  /** Built-in tool names, which HTTP tools cannot take. */
  builtinNames: () => string[];
}

export class ToolSourceService {
  constructor(private readonly deps: ToolSourceServiceDeps) {}

  /** Saves an HTTP tool; 422 for a bad schema, a host the namespace does not allow, a taken name. */
  async addHttpTool(
    tenant: string,
    ns: string,
    definition: HttpToolDefinition,
  ): Promise<ToolDescription> {
    const config = await this.deps.namespaces.config(tenant, ns);
    this.checkUrl(definition.url, config);
    if (this.deps.builtinNames().includes(definition.name)) {
      throw new ValidationError(
        "tool_name_taken",
        `'${definition.name}' is a built-in tool: choose another name for the HTTP tool`,
      );
    }
    const record = {
      kind: "http",
      ...definition,
      created_at: new Date(this.deps.clock.now()).toISOString(),
    };
    // Builds the tool first: a schema that cannot check values is refused here.
    await loadJsonSchemaCompiler();
    // Loaded here, not with the service: a worker, which builds this service, never adds a
    // tool. Before the write, so that a failed load leaves no record behind.
    const { describeTool } = await import("../tools/describe");
    const tool = httpTool(record, { secret: async () => "", now: this.deps.clock.now });
    await this.deps.namespaces.putToolRecord(tenant, ns, definition.name, record, true);
    return describeTool(tool);
  }

  async deleteHttpTool(tenant: string, ns: string, name: string): Promise<void> {
    await this.deps.namespaces.deleteToolRecord(tenant, ns, name, "http");
  }

  /**
   * Saves an MCP server after listing its tools once: a server that cannot be
   * reached, a URL the namespace does not allow, or a listing {@link listingError}
   * refuses (a tool named twice, an `inputSchema` out of bounds) is refused (422)
   * and nothing is stored.
   */
  async addMcpServer(
    tenant: string,
    ns: string,
    definition: McpServerDefinition,
  ): Promise<McpServer> {
    const config = await this.deps.namespaces.config(tenant, ns);
    this.checkUrl(definition.url, config);
    const secret = new Set(definition.secret_headers.map((h) => h.toLowerCase()));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(definition.headers)) {
      headers[name] = secret.has(name.toLowerCase())
        ? await this.deps.secrets.seal(
            value,
            secretContext(tenant, ns, definition.name, name, definition.url),
          )
        : value;
    }
    const record: McpServerRecord = {
      kind: "mcp",
      name: definition.name,
      url: definition.url,
      headers,
      secret_headers: [...secret],
      allow: definition.tools ?? null,
      tools: [],
      listed_at: null,
      secrets_bound_to_url: true,
    };
    const listed = await this.list(tenant, config, record);
    await this.deps.namespaces.putToolRecord(
      tenant,
      ns,
      mcpRecordKey(definition.name),
      listed,
      true,
    );
    return presentServer(listed);
  }

  async listMcpServers(tenant: string, ns: string): Promise<McpServer[]> {
    await this.deps.namespaces.config(tenant, ns);
    const records = await this.deps.namespaces.listToolRecords(tenant, ns);
    return records.filter((r) => r.kind === "mcp").map((r) => presentServer(r as McpServerRecord));
  }

  /** Lists the server's tools again now (`POST …/refresh`); a refused listing leaves the stored one. */
  async refreshMcpServer(tenant: string, ns: string, server: string): Promise<McpServer> {
    const config = await this.deps.namespaces.config(tenant, ns);
    const record = await this.deps.namespaces.getToolRecord(tenant, ns, mcpRecordKey(server));
    if (record?.kind !== "mcp") throw new NotFoundError("mcp server", server);
    const listed = await this.list(tenant, config, record as McpServerRecord);
    await this.deps.namespaces.putToolRecord(tenant, ns, mcpRecordKey(server), listed, false);
    return presentServer(listed);
  }

  async deleteMcpServer(tenant: string, ns: string, server: string): Promise<void> {
    await this.deps.namespaces.deleteToolRecord(tenant, ns, mcpRecordKey(server), "mcp");
  }

  /** Stores a fresh `tools/list` of a server (the MCP source's TTL refresh). */
  async saveTools(
    tenant: string,
    ns: string,
    server: string,
    tools: McpToolInfo[],
    listedAt: string,
  ): Promise<void> {
    const record = await this.deps.namespaces.getToolRecord(tenant, ns, mcpRecordKey(server));
    if (record?.kind !== "mcp") return;
    await this.deps.namespaces.putToolRecord(
      tenant,
      ns,
      mcpRecordKey(server),
      { ...record, tools, listed_at: listedAt },
      false,
    );
  }

  private async list(
    tenant: string,
    config: { name: string; allowed_hosts: string[] },
    record: McpServerRecord,
  ): Promise<McpServerRecord> {
    const connection = await mcpConnection(tenant, config, record, this.deps);
    let tools: McpToolInfo[];
    try {
      tools = await this.deps.mcp.listTools(connection);
    } catch (error) {
      throw new ValidationError(
        "mcp_unreachable",
        `the tools of the MCP server '${record.name}' could not be listed: ${(error as Error).message}. Check its url and headers, and that it speaks Streamable HTTP`,
      );
    }
    // A tool named twice or a schema out of bounds: refused before anything is stored.
    await loadJsonSchemaCompiler();
    const refused = listingError(record, tools);
    if (refused) throw refused;
    return { ...record, tools, listed_at: new Date(this.deps.clock.now()).toISOString() };
  }

  private checkUrl(url: string, config: { name: string; allowed_hosts: string[] }): void {
    const problem = toolUrlProblem(url, config, this.deps.outbound);
    if (problem) throw new ValidationError("url_not_allowed", problem);
  }
}

/** A server as the API shows it: secret header values as `***`, never the sealed text. */
function presentServer(record: McpServerRecord): McpServer {
  const secret = new Set(record.secret_headers.map((h) => h.toLowerCase()));
  return {
    name: record.name,
    url: record.url,
    headers: Object.fromEntries(
      Object.entries(record.headers).map(([name, value]) => [
        name,
        secret.has(name.toLowerCase()) ? "***" : value,
      ]),
    ),
    tools:
      record.allow === null
        ? record.tools
        : record.tools.filter((t) => record.allow!.includes(t.name)),
    listed_at: record.listed_at,
  };
}
