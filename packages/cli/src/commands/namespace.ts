/**
 * `stackvm namespace create|update|delete|list|show` (StackVM's `flask namespace`):
 * which tools and hosts the tasks of a namespace may use.
 */
import type { Namespace } from "@stackvm/core";
import { type Command, JSON_OPTION, printJson } from "../command";
import { CliError, EXIT, usage } from "../exit-codes";
import { planningFlag } from "../planning-flag";

const FIELDS = {
  "allowed-tools": {
    type: "string",
    multiple: true,
    description: "a tool its tasks may call",
  },
  "allowed-hosts": {
    type: "string",
    multiple: true,
    description: "a host http_request may reach",
  },
  description: { type: "string", description: "what the namespace is for" },
  "planner-instructions": {
    type: "string",
    // A short value name: the flag's own would push every description out of a narrow terminal.
    value: "text",
    description: "guidance for the planner, added to its plan prompts (at most 4,000 characters)",
  },
  "plan-compat": {
    type: "string",
    description: "strict (default) or stackvm: StackVM compatibility mode for its plans",
  },
  planning: {
    type: "string",
    value: "mode",
    description:
      "up_front (default: whole plan first) or adaptive (next steps after each result) for its tasks",
  },
} as const;

const path = (name: string) => `/v1/namespaces/${encodeURIComponent(name)}`;

function show(ns: Namespace): string[] {
  return [
    `namespace      ${ns.name}`,
    `description    ${ns.description || "-"}`,
    `allowed tools  ${ns.allowed_tools.join(", ") || "-"}`,
    `allowed hosts  ${ns.allowed_hosts.join(", ") || "-"}`,
    ...(ns.planner_instructions ? [`instructions   ${ns.planner_instructions}`] : []),
    ...(ns.code_tools.length ? [`code tools     ${ns.code_tools.join(", ")}`] : []),
    `plan compat    ${ns.plan_compat ?? "strict"}`,
    `planning       ${ns.planning ?? "up_front"}`,
  ];
}

/** `--plan-compat`, checked here so a typo is a usage error, not a 400. */
function planCompat(value: unknown, command: string): "strict" | "stackvm" | undefined {
  if (value === undefined || value === "strict" || value === "stackvm") return value;
  throw usage(`--plan-compat is strict or stackvm, not '${String(value)}'`, command);
}

/**
 * The settings of a namespace that no flag changes, as read: a PUT replaces the
 * whole namespace, so an update sends them back or they would be reset.
 */
function kept(ns: Namespace): Partial<Namespace> {
  return {
    ...(ns.sandbox_limits === undefined ? {} : { sandbox_limits: ns.sandbox_limits }),
    ...(ns.knowledge_bases === undefined ? {} : { knowledge_bases: ns.knowledge_bases }),
    ...(ns.parallel_width === undefined ? {} : { parallel_width: ns.parallel_width }),
    ...(ns.planning === undefined ? {} : { planning: ns.planning }),
    ...(ns.planner_instructions === undefined
      ? {}
      : { planner_instructions: ns.planner_instructions }),
  };
}

const list = (v: unknown) => (Array.isArray(v) ? (v as string[]) : undefined);

export const namespaceCommands: Command[] = [
  {
    name: "namespace create",
    summary: "Create a namespace (fails if it exists: use update).",
    usage:
      'stackvm namespace create NAME --allowed-tools TOOL [--allowed-tools TOOL ...] [--allowed-hosts HOST ...] [--description "..."] [--planner-instructions "..."] [--plan-compat strict|stackvm] [--planning up_front|adaptive] [--json]',
    options: { ...FIELDS, ...JSON_OPTION },
    args: ["NAME"],
    async run(ctx, v, [name]) {
      const compat = planCompat(v["plan-compat"], "namespace create");
      const planning =
        v.planning === undefined ? undefined : planningFlag(v.planning, "namespace create");
      const exists = await ctx.client.request("GET", path(name!)).then(
        () => true,
        (error: unknown) => {
          if (error instanceof CliError && error.exitCode === EXIT.notFound) return false;
          throw error;
        },
      );
      // `default` always answers (every tenant has it); only a saved one counts as taken.
      if (exists && name !== "default") {
        throw new CliError(
          EXIT.rejected,
          `namespace '${name}' already exists: change it with \`stackvm namespace update ${name} ...\``,
        );
      }
      const ns = await ctx.client.request<Namespace>("PUT", path(name!), {
        body: {
          allowed_tools: list(v["allowed-tools"]) ?? [],
          allowed_hosts: list(v["allowed-hosts"]) ?? [],
          description: v.description ?? "",
          ...(v["planner-instructions"] ? { planner_instructions: v["planner-instructions"] } : {}),
          ...(compat ? { plan_compat: compat } : {}),
          ...(planning ? { planning } : {}),
        },
      });
      if (v.json) printJson(ctx.out, ns);
      else for (const line of show(ns)) ctx.out.line(line);
      return EXIT.ok;
    },
  },
  {
    name: "namespace update",
    summary: "Change a namespace; flags not given keep their values.",
    usage:
      'stackvm namespace update NAME [--allowed-tools TOOL ...] [--allowed-hosts HOST ...] [--description "..."] [--planner-instructions "..."] [--plan-compat strict|stackvm] [--planning up_front|adaptive] [--json]',
    options: { ...FIELDS, ...JSON_OPTION },
    args: ["NAME"],
    async run(ctx, v, [name]) {
      const compat = planCompat(v["plan-compat"], "namespace update");
      const planning =
        v.planning === undefined ? undefined : planningFlag(v.planning, "namespace update");
      if (
        !v["allowed-tools"] &&
        !v["allowed-hosts"] &&
        v.description === undefined &&
        v["planner-instructions"] === undefined &&
        compat === undefined &&
        planning === undefined
      ) {
        throw usage(
          "nothing to change: give --allowed-tools, --allowed-hosts, --description, --planner-instructions, --plan-compat or --planning",
          "namespace update",
        );
      }
      const current = await ctx.client.request<Namespace>("GET", path(name!));
      const ns = await ctx.client.request<Namespace>("PUT", path(name!), {
        body: {
          ...kept(current),
          allowed_tools: list(v["allowed-tools"]) ?? current.allowed_tools,
          allowed_hosts: list(v["allowed-hosts"]) ?? current.allowed_hosts,
          description: v.description ?? current.description,
          ...(v["planner-instructions"] === undefined
            ? {}
            : { planner_instructions: v["planner-instructions"] }),
          plan_compat: compat ?? current.plan_compat ?? "strict",
          ...(planning ? { planning } : {}),
        },
      });
      if (v.json) printJson(ctx.out, ns);
      else for (const line of show(ns)) ctx.out.line(line);
      return EXIT.ok;
    },
  },
  {
    name: "namespace delete",
    summary: "Delete a namespace.",
    usage: "stackvm namespace delete NAME",
    options: {},
    args: ["NAME"],
    async run(ctx, _v, [name]) {
      await ctx.client.request("DELETE", path(name!));
      ctx.out.line(`namespace ${name} deleted`);
      return EXIT.ok;
    },
  },
  {
    name: "namespace list",
    summary: "List namespaces.",
    usage: "stackvm namespace list [--json]",
    options: { ...JSON_OPTION },
    args: [],
    async run(ctx, v) {
      const body = await ctx.client.request<{ namespaces: Namespace[] }>("GET", "/v1/namespaces");
      if (v.json) return printJson(ctx.out, body);
      for (const ns of body.namespaces) {
        ctx.out.line(`${ns.name.padEnd(20)} ${ns.allowed_tools.join(",")}  ${ns.description}`);
      }
      return EXIT.ok;
    },
  },
  {
    name: "namespace show",
    summary: "Show a namespace.",
    usage: "stackvm namespace show NAME [--json]",
    options: { ...JSON_OPTION },
    args: ["NAME"],
    async run(ctx, v, [name]) {
      const ns = await ctx.client.request<Namespace>("GET", path(name!));
      if (v.json) printJson(ctx.out, ns);
      else for (const line of show(ns)) ctx.out.line(line);
      return EXIT.ok;
    },
  },
];
