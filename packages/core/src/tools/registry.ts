/**
 * The tools a plan can call, one registry for every reader: the planner's and the
 * replanner's prompts, the plan validator, `GET /v1/tools` and the executor all ask
 * the registry, so that a tool that one of them sees, all of them see.
 *
 * A namespace's tools are the built-ins it allows plus its own tools, which are
 * allowed without being listed: code tools (sandboxed programs), HTTP tools (the
 * integrator's endpoints) and the tools of its MCP servers (`server.tool`). Its own
 * tools are stored as records under the namespace (`NamespaceService` owns the
 * keys); a {@link ToolSource} per kind turns a record into tools.
 *
 * Where to add tools:
 * - a built-in that needs nothing but the `ToolContext`: {@link BUILTIN_TOOLS} below;
 * - a built-in family that needs a port (knowledge search needs the index): build
 *   its tools in `createSystem` (packages/functions/src/system.ts) and pass them in
 *   the `builtins` of `new ToolRegistry(...)` there; the `default` namespace then
 *   allows them and every reader above sees them;
 * - a new kind of namespace-owned source: a {@link ToolSource} in that same call.
 */
import { ValidationError } from "../errors";
import type { NamespaceConfig } from "../model";
import { askHumanTool } from "./ask-human";
import { codeTaskTool } from "./code-task";
import { httpRequestTool } from "./http-request";
import { llmGenerateTool } from "./llm-generate";
import { runCodeTool } from "./run-code";
import type { Tool, ToolSourceKind } from "./tool";

/** Every built-in tool that needs no port, in the order the planner sees them. */
const BUILTIN_TOOLS: readonly Tool[] = [
  llmGenerateTool,
  httpRequestTool,
  runCodeTool,
  codeTaskTool,
  askHumanTool,
];

const builtins: ReadonlyMap<string, Tool> = new Map(BUILTIN_TOOLS.map((tool) => [tool.name, tool]));

/** The built-in tools by name. */
export function builtinTools(): ReadonlyMap<string, Tool> {
  return builtins;
}

/** What the planner and `GET /v1/tools` see of a tool. */
export interface ToolDescription {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the input. */
  input_schema: Record<string, unknown>;
  /** `builtin`, `code`, `http` or `mcp`. */
  source: ToolSourceKind;
}

/** A tool definition stored under a namespace: `kind` says which source reads it. */
export type ToolRecord = Record<string, unknown> & { kind?: string; name: string };

/** Turns a namespace's stored records of one kind into tools. */
export interface ToolSource {
  /** The `kind` of the records this source reads (code tool records have none: `code`). */
  readonly kind: Exclude<ToolSourceKind, "builtin">;
  /**
   * The tools one record gives: one for a code or HTTP tool, the listed tools of
   * an MCP server. A record that cannot give tools now (an MCP server that does not
   * answer) gives none rather than failing every plan of the namespace.
   */
  tools(
    tenant: string,
    namespace: NamespaceConfig,
    record: ToolRecord,
    options?: ToolSourceOptions,
  ): Promise<Tool[]>;
}

/** How a source is asked for tools. */
export interface ToolSourceOptions {
  /**
   * True on a step's call (the worker): a source may refresh what it cached (an
   * MCP server's stale `tools/list`). False on the API's request path, which
   * answers from what is stored and never waits on a tool server.
   */
  refresh: boolean;
}

/** Where the registry reads a namespace's records (`NamespaceService` provides it). */
export interface ToolRecords {
  listToolRecords(tenant: string, namespace: string): Promise<ToolRecord[]>;
  /** One record by its key in the namespace: a tool's name, or `mcp:{server}`. */
  getToolRecord(tenant: string, namespace: string, key: string): Promise<ToolRecord | null>;
}

/** The tools of one namespace: all that exist for it, and the names it may call. */
export interface NamespaceTools {
  all: ReadonlyMap<string, Tool>;
  allowed: ReadonlySet<string>;
}

/** The record key of an MCP server within its namespace. */
export const mcpRecordKey = (server: string): string => `mcp:${server}`;

/** The kind of a stored record; code tool records, stored before kinds existed, have none. */
export const recordKind = (record: object): string => {
  const kind = (record as { kind?: unknown }).kind;
  return typeof kind === "string" ? kind : "code";
};

export class ToolRegistry {
  private readonly builtinMap: ReadonlyMap<string, Tool>;
  private readonly sources: ReadonlyMap<string, ToolSource>;

  constructor(
    builtinList: Iterable<Tool>,
    sources: readonly ToolSource[] = [],
    private readonly records: ToolRecords | null = null,
  ) {
    this.builtinMap = new Map([...builtinList].map((tool) => [tool.name, tool]));
    this.sources = new Map(sources.map((source) => [source.kind, source]));
  }

  /** The built-in tools by name. */
  get builtins(): ReadonlyMap<string, Tool> {
    return this.builtinMap;
  }

  /** The names the `default` namespace allows. */
  builtinNames(): string[] {
    return [...this.builtinMap.keys()];
  }

  /** Every tool of the namespace, reading its records (one query). */
  async forNamespace(tenant: string, namespace: NamespaceConfig): Promise<NamespaceTools> {
    const records = this.records ? await this.records.listToolRecords(tenant, namespace.name) : [];
    return this.fromRecords(tenant, namespace, records);
  }

  /**
   * Every tool of the namespace from records already read (`NamespaceService.resolve`
   * reads them with the namespace).
   *
   * @throws ValidationError `tool_name_taken` when a record's tool has a built-in's name.
   */
  async fromRecords(
    tenant: string,
    namespace: NamespaceConfig,
    records: readonly ToolRecord[],
  ): Promise<NamespaceTools> {
    const all = new Map(this.builtinMap);
    const allowed = new Set(namespace.allowed_tools.filter((name) => all.has(name)));
    const lists = await Promise.all(
      records.map((record) => this.toolsOf(tenant, namespace, record, { refresh: false })),
    );
    for (const tool of lists.flat()) {
      if (all.has(tool.name)) {
        throw new ValidationError(
          "tool_name_taken",
          `namespace '${namespace.name}' has a ${tool.source ?? "code"} tool named '${tool.name}', which is ${this.builtinMap.has(tool.name) ? "a built-in tool" : "defined twice"}; rename it`,
        );
      }
      all.set(tool.name, tool);
      allowed.add(tool.name);
    }
    return { all, allowed };
  }

  /**
   * What one `calling` needs: the built-ins and, when `name` is one of the
   * namespace's own tools, that tool, from at most one read. The common step path
   * stays one read of the branch for a built-in.
   */
  async forCall(tenant: string, namespace: NamespaceConfig, name: string): Promise<NamespaceTools> {
    const allowed = new Set(namespace.allowed_tools.filter((n) => this.builtinMap.has(n)));
    const key = this.recordKeyOf(namespace, name);
    if (key === null || this.builtinMap.has(name) || !this.records) {
      await this.builtinMap.get(name)?.prepare?.();
      return { all: this.builtinMap, allowed };
    }
    const record = await this.records.getToolRecord(tenant, namespace.name, key);
    const tools = record ? await this.toolsOf(tenant, namespace, record, { refresh: true }) : [];
    const all = new Map(this.builtinMap);
    for (const tool of tools) {
      all.set(tool.name, tool);
      allowed.add(tool.name);
    }
    return { all, allowed };
  }

  /** Where the namespace keeps the record of `name`, or null when it has none. */
  private recordKeyOf(namespace: NamespaceConfig, name: string): string | null {
    const dot = name.indexOf(".");
    if (dot > 0) {
      const server = name.slice(0, dot);
      return (namespace.mcp_servers ?? []).includes(server) ? mcpRecordKey(server) : null;
    }
    const own = [...(namespace.code_tools ?? []), ...(namespace.http_tools ?? [])];
    return own.includes(name) ? name : null;
  }

  private async toolsOf(
    tenant: string,
    namespace: NamespaceConfig,
    record: ToolRecord,
    options: ToolSourceOptions,
  ): Promise<Tool[]> {
    const source = this.sources.get(recordKind(record));
    return source ? source.tools(tenant, namespace, record, options) : [];
  }
}

/** The tools of a namespace and its code tools; kept for callers that hold tools already. */
export interface ResolvedTools {
  /** Every tool that exists for the namespace: built-ins and its code tools. */
  all: Map<string, Tool>;
  /** The names a plan in the namespace may call. */
  allowed: Set<string>;
}

/**
 * The tools of a namespace from built-ins and tools already built. Built-ins are
 * allowed when `allowed_tools` lists them; the namespace's own tools are allowed
 * without being listed. Names in `allowed_tools` that match no tool are left out.
 *
 * @throws ValidationError `tool_name_taken` when an own tool has a built-in's name.
 */
export function resolveTools(
  namespace: NamespaceConfig,
  codeTools: readonly Tool[],
): ResolvedTools {
  const all = new Map<string, Tool>(builtins);
  for (const tool of codeTools) {
    if (all.has(tool.name)) {
      throw new ValidationError(
        "tool_name_taken",
        `namespace '${namespace.name}' has a code tool named '${tool.name}', which is ${builtins.has(tool.name) ? "a built-in tool" : "defined twice"}; rename the code tool`,
      );
    }
    all.set(tool.name, tool);
  }
  const allowed = new Set(namespace.allowed_tools.filter((name) => all.has(name)));
  for (const tool of codeTools) allowed.add(tool.name);
  return { all, allowed };
}
