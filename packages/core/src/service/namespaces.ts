/**
 * Namespaces: which tools and hosts a task may use. Every tenant has a `default`
 * namespace that allows all built-in tools and no hosts until the tenant replaces it.
 */

import { isErrorKind, NotFoundError, ValidationError } from "../errors";
import type { NamespaceConfig } from "../model";
import type { Clock } from "../ports/clock";
import type { SandboxLimitsRequest } from "../sandbox/protocol";
import type { NamespaceStore } from "../store/namespace-store";
import { prepareTools } from "../tools/prepare";
import {
  type NamespaceTools,
  recordKind,
  type ToolRecord,
  type ToolRecords,
  ToolRegistry,
  type ToolSource,
} from "../tools/registry";
import type { Tool } from "../tools/tool";
import type { Namespace, NamespaceInput } from "./namespace-input";
import { NamespaceName } from "./namespace-name";

/** A code tool saved in a namespace (runs in the sandbox). */
export interface CodeToolRecord {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  language: "javascript" | "python";
  code: string;
  created_at: string;
}

/** A namespace read for a task: its snapshot and its tools (`NamespaceService.resolve`). */
export interface ResolvedNamespace {
  config: NamespaceConfig;
  codeTools: CodeToolRecord[];
  /** Every tool the namespace can call, from the registry. */
  tools: NamespaceTools;
}

export class NamespaceService implements ToolRecords {
  constructor(
    private readonly stored: NamespaceStore,
    private readonly clock: Clock,
    /** The tool registry; the `default` namespace allows all its built-ins. */
    private readonly registry: ToolRegistry,
  ) {}

  private builtinTools(): string[] {
    return this.registry.builtinNames();
  }

  async get(tenant: string, name: string): Promise<Namespace> {
    return (await this.read(tenant, name)).namespace;
  }

  /** The namespace as a task snapshots it when it starts. */
  async config(tenant: string, name: string): Promise<NamespaceConfig> {
    return configOf(await this.get(tenant, name));
  }

  /**
   * The namespace's snapshot and its code tools' records, from one read of the
   * namespace and one query of its tools: what starting or checking a task needs
   * (`PlanChecks.validateIn`). A missing namespace throws `NotFoundError`.
   */
  async resolve(tenant: string, name: string): Promise<ResolvedNamespace> {
    const { namespace, codeTools, records } = await this.read(tenant, name);
    const config = configOf(namespace);
    const tools = await this.registry.fromRecords(tenant, config, records);
    // Its callers check plans against these tools (synchronously).
    await prepareTools(tools.all.values());
    return { config, codeTools, tools };
  }

  /** The namespace with its tools' records (`default` when not stored). */
  private async read(
    tenant: string,
    name: string,
  ): Promise<{ namespace: Namespace; codeTools: CodeToolRecord[]; records: ToolRecord[] }> {
    const stored = await this.stored.getNamespace(tenant, name);
    const records = await this.listToolRecords(tenant, name);
    const codeTools = records.filter(
      (r) => recordKind(r) === "code",
    ) as unknown as CodeToolRecord[];
    const named = (kind: string) =>
      records.filter((r) => recordKind(r) === kind).map((r) => r.name);
    const own = {
      code_tools: codeTools.map((t) => t.name),
      http_tools: named("http"),
      mcp_servers: named("mcp"),
    };
    if (stored) {
      const namespace: Namespace = {
        name,
        allowed_tools: stored.allowed_tools as string[],
        allowed_hosts: stored.allowed_hosts as string[],
        description: (stored.description as string) ?? "",
        ...(typeof stored.planner_instructions === "string" && stored.planner_instructions !== ""
          ? { planner_instructions: stored.planner_instructions }
          : {}),
        ...own,
        ...(stored.sandbox_limits
          ? { sandbox_limits: stored.sandbox_limits as SandboxLimitsRequest }
          : {}),
        ...(Array.isArray(stored.knowledge_bases)
          ? { knowledge_bases: stored.knowledge_bases as string[] }
          : {}),
        ...(typeof stored.parallel_width === "number"
          ? { parallel_width: stored.parallel_width }
          : {}),
        ...(typeof stored.retention_days === "number"
          ? { retention_days: stored.retention_days }
          : {}),
        plan_compat: stored.plan_compat === "stackvm" ? "stackvm" : "strict",
        ...(stored.planning === "adaptive" ? { planning: "adaptive" as const } : {}),
        ...(stored.replan === false ? { replan: false } : {}),
        created_at: stored.created_at as string,
        updated_at: stored.updated_at as string,
      };
      return { namespace, codeTools, records };
    }
    if (name === "default") {
      const namespace: Namespace = {
        name,
        allowed_tools: this.builtinTools(),
        allowed_hosts: [],
        description: "All built-in tools, no hosts.",
        ...own,
        plan_compat: "strict",
        created_at: null,
        updated_at: null,
      };
      return { namespace, codeTools, records };
    }
    throw new NotFoundError("namespace", name);
  }

  async list(tenant: string): Promise<Namespace[]> {
    const names = new Set(await this.stored.listNamespaceNames(tenant));
    names.add("default");
    return Promise.all([...names].sort().map((n) => this.get(tenant, n)));
  }

  async put(tenant: string, name: string, input: NamespaceInput): Promise<Namespace> {
    NamespaceName.parse(name);
    const known = new Set(this.builtinTools());
    const codeTools = new Set((await this.listToolRecords(tenant, name)).map((t) => t.name));
    const unknown = input.allowed_tools.filter((t) => !known.has(t) && !codeTools.has(t));
    if (unknown.length > 0) {
      throw new ValidationError(
        "unknown_tool",
        `allowed_tools names tools that do not exist: ${unknown.join(", ")}. GET /v1/tools lists them.`,
        { unknown },
      );
    }
    const now = new Date(this.clock.now()).toISOString();
    const existing = await this.stored.getNamespace(tenant, name);
    await this.stored.putNamespace(tenant, name, {
      name,
      allowed_tools: [...new Set(input.allowed_tools)],
      allowed_hosts: [...new Set(input.allowed_hosts.map((h) => h.toLowerCase()))],
      description: input.description,
      ...(input.planner_instructions?.trim()
        ? { planner_instructions: input.planner_instructions.trim() }
        : {}),
      ...(input.sandbox_limits ? { sandbox_limits: input.sandbox_limits } : {}),
      ...(input.knowledge_bases ? { knowledge_bases: [...new Set(input.knowledge_bases)] } : {}),
      ...(input.parallel_width ? { parallel_width: input.parallel_width } : {}),
      ...(input.retention_days ? { retention_days: input.retention_days } : {}),
      ...(input.plan_compat === "stackvm" ? { plan_compat: "stackvm" } : {}),
      ...(input.planning === "adaptive" ? { planning: "adaptive" } : {}),
      ...(input.replan === false ? { replan: false } : {}),
      created_at: (existing?.created_at as string) ?? now,
      updated_at: now,
    });
    return this.get(tenant, name);
  }

  async delete(tenant: string, name: string): Promise<void> {
    const existing = await this.stored.getNamespace(tenant, name);
    const tools = await this.listToolRecords(tenant, name);
    if (!existing && tools.length === 0) throw new NotFoundError("namespace", name);
    await this.stored.deleteNamespace(
      tenant,
      name,
      tools.map((t) => t.sk as string),
    );
  }

  /**
   * Every tool record of the namespace, of every kind (code and HTTP tools, MCP
   * servers), from one query: they share the `NSTOOL#{ns}#` prefix, so a code and
   * an HTTP tool cannot take the same name.
   */
  async listToolRecords(tenant: string, ns: string): Promise<ToolRecord[]> {
    return (await this.stored.listToolRecords(tenant, ns)) as unknown as ToolRecord[];
  }

  /** One tool record by its key in the namespace (a tool's name, or `mcp:{server}`). */
  async getToolRecord(tenant: string, ns: string, key: string): Promise<ToolRecord | null> {
    return (await this.stored.getToolRecord(tenant, ns, key)) as ToolRecord | null;
  }

  async listCodeTools(tenant: string, ns: string): Promise<CodeToolRecord[]> {
    const records = await this.listToolRecords(tenant, ns);
    return records.filter((r) => recordKind(r) === "code") as unknown as CodeToolRecord[];
  }

  async getCodeTool(tenant: string, ns: string, tool: string): Promise<CodeToolRecord | null> {
    const record = await this.stored.getToolRecord(tenant, ns, tool);
    return record && recordKind(record) === "code" ? (record as unknown as CodeToolRecord) : null;
  }

  /**
   * Saves a new code tool in an existing namespace (`default` always exists),
   * stamped with the clock. Checks, in order: the namespace exists (404), the name
   * is not a built-in tool's, the namespace has no tool of that name (422).
   */
  async addCodeTool(
    tenant: string,
    ns: string,
    definition: Omit<CodeToolRecord, "created_at">,
  ): Promise<CodeToolRecord> {
    // Only the namespace item: its code tools are not needed to know it exists.
    if (ns !== "default" && !(await this.stored.getNamespace(tenant, ns))) {
      throw new NotFoundError("namespace", ns);
    }
    const tool: CodeToolRecord = {
      ...definition,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    await this.putCodeTool(tenant, ns, tool);
    return tool;
  }

  async putCodeTool(tenant: string, ns: string, tool: CodeToolRecord): Promise<void> {
    if (this.builtinTools().includes(tool.name)) {
      throw new ValidationError(
        "tool_name_taken",
        `'${tool.name}' is a built-in tool: choose another name for the code tool`,
      );
    }
    await this.stored
      .putToolRecord(tenant, ns, tool.name, { ...tool }, true)
      .catch((error: unknown) => {
        if (isErrorKind(error, "conflict")) {
          throw new ValidationError(
            "tool_exists",
            `the namespace '${ns}' already has a tool '${tool.name}': delete it first or choose another name`,
          );
        }
        throw error;
      });
  }

  /**
   * Stores a tool record of another kind (HTTP tool, MCP server) under `key`.
   * `create`: only if the key is free (422 `tool_exists` otherwise); else replaces.
   */
  async putToolRecord(
    tenant: string,
    ns: string,
    key: string,
    record: ToolRecord,
    create: boolean,
  ): Promise<void> {
    await this.stored
      .putToolRecord(tenant, ns, key, { ...record }, create)
      .catch((error: unknown) => {
        if (isErrorKind(error, "conflict")) {
          throw new ValidationError(
            "tool_exists",
            `the namespace '${ns}' already has a ${record.kind === "mcp" ? "server" : "tool"} '${record.name}': delete it first or choose another name`,
          );
        }
        throw error;
      });
  }

  /** Deletes a tool record of `kind`; 404 when the namespace has none under `key`. */
  async deleteToolRecord(tenant: string, ns: string, key: string, kind: string): Promise<void> {
    const existing = await this.stored.getToolRecord(tenant, ns, key);
    if (!existing || recordKind(existing) !== kind) {
      throw new NotFoundError(
        kind === "mcp" ? "mcp server" : `${kind} tool`,
        (existing?.name as string) ?? key.replace(/^mcp:/, ""),
      );
    }
    await this.stored.deleteToolRecord(tenant, ns, key);
  }

  async deleteCodeTool(tenant: string, ns: string, tool: string): Promise<void> {
    const existing = await this.stored.getToolRecord(tenant, ns, tool);
    if (!existing || recordKind(existing) !== "code") throw new NotFoundError("tool", tool);
    await this.stored.deleteToolRecord(tenant, ns, tool);
  }
}

/**
 * The namespaces and the tool registry, wired to each other: the registry reads
 * the namespaces' tool records, the namespaces ask the registry for their tools.
 *
 * @example
 * const { namespaces, registry } = createNamespaces(new NamespaceStore(items), clock, builtinTools().values(), [codeToolSource]);
 */
export function createNamespaces(
  stored: NamespaceStore,
  clock: Clock,
  builtins: Iterable<Tool>,
  sources: readonly ToolSource[],
): { namespaces: NamespaceService; registry: ToolRegistry } {
  const records: ToolRecords = {
    listToolRecords: (tenant, ns) => namespaces.listToolRecords(tenant, ns),
    getToolRecord: (tenant, ns, key) => namespaces.getToolRecord(tenant, ns, key),
  };
  const registry = new ToolRegistry(builtins, sources, records);
  const namespaces = new NamespaceService(stored, clock, registry);
  return { namespaces, registry };
}

function configOf(ns: Namespace): NamespaceConfig {
  return {
    name: ns.name,
    allowed_tools: ns.allowed_tools,
    allowed_hosts: ns.allowed_hosts,
    description: ns.description,
    ...(ns.planner_instructions ? { planner_instructions: ns.planner_instructions } : {}),
    code_tools: ns.code_tools,
    http_tools: ns.http_tools,
    mcp_servers: ns.mcp_servers,
    ...(ns.sandbox_limits ? { sandbox_limits: ns.sandbox_limits } : {}),
    ...(ns.knowledge_bases ? { knowledge_bases: ns.knowledge_bases } : {}),
    ...(ns.parallel_width ? { parallel_width: ns.parallel_width } : {}),
    ...(ns.retention_days ? { retention_days: ns.retention_days } : {}),
    ...(ns.plan_compat === "stackvm" ? { plan_compat: "stackvm" as const } : {}),
    ...(ns.planning === "adaptive" ? { planning: "adaptive" as const } : {}),
    ...(ns.replan === false ? { replan: false } : {}),
  };
}
