/**
 * The resource graph of the app as the infra test collects it: every Pulumi
 * resource with its resolved inputs, and every function build SST asked for.
 */

/** The region, account and partition the mocks answer with. */
export const REGION = "us-east-1";
export const ACCOUNT = "123456789012";
export const PARTITION = "aws";

/** One resource registered with Pulumi. */
export interface Resource {
  /** Pulumi type token, e.g. `aws:lambda/function:Function`. */
  type: string;
  /** Logical name, e.g. `SandboxFunction`. */
  name: string;
  /** The physical id the mocks gave it. */
  id: string;
  /** The inputs, resolved. */
  inputs: Record<string, unknown>;
  /** The inputs plus the outputs the mocks made up (ARN, URL, ...). */
  state: Record<string, unknown>;
}

/** What `sst.aws.Function` asked the CLI to build (`Runtime.Build`). */
export interface FunctionBuild {
  /** The component's name: its Lambda is `${functionID}Function`, its role `${functionID}Role`. */
  functionID: string;
  /** `path/to/file.exportName`, relative to the project root. */
  handler: string;
  /** Linked resources by name, with the properties the function can read. */
  links: Record<string, unknown>;
  /** Whether `sst dev` would run it locally. */
  dev: boolean;
  /** The function's `nodejs` options as SST passes them to the build, plus its architecture. */
  properties?: {
    splitting?: boolean;
    plugins?: string;
    install?: string[];
    architecture?: string;
  };
  /** The files of the built bundle, after SST's `postbuild` hook (the harness's build writes only the handler). */
  bundleFiles?: string[];
}

/** The collected graph. */
export interface InfraGraph {
  resources: Resource[];
  builds: FunctionBuild[];
  /** What `run()` returned, resolved. */
  outputs: Record<string, unknown>;
}

/** One IAM statement, normalized: lists are always lists. */
export interface Statement {
  effect: "Allow" | "Deny";
  actions: string[];
  resources: string[];
  principal: Record<string, string[]> | undefined;
  condition: Record<string, Record<string, unknown>> | undefined;
}

/** A Lambda function of the app with what surrounds it. */
export interface FunctionView {
  build: FunctionBuild;
  lambda: Resource;
  role: Resource | undefined;
  /** `lambda.environment.variables`, or empty. */
  environment: Record<string, string>;
  /** Every statement of the role's inline policies. */
  statements: Statement[];
}

const list = (value: unknown): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];

/** Parses a policy document (a JSON string or an object) into normalized statements. */
export function statementsOf(policy: unknown): Statement[] {
  const document = (typeof policy === "string" ? JSON.parse(policy) : policy) as {
    Statement?: Record<string, unknown>[] | Record<string, unknown>;
  };
  const raw = document?.Statement ?? [];
  return (Array.isArray(raw) ? raw : [raw]).map((s) => ({
    effect: s.Effect === "Deny" ? "Deny" : "Allow",
    actions: list(s.Action),
    resources: list(s.Resource),
    principal:
      s.Principal === undefined
        ? undefined
        : typeof s.Principal === "string"
          ? { "*": [s.Principal] }
          : Object.fromEntries(
              Object.entries(s.Principal as Record<string, unknown>).map(([k, v]) => [k, list(v)]),
            ),
    condition: s.Condition as Statement["condition"],
  }));
}

/** The resources of a type, e.g. `aws:sqs/queue:Queue`. */
export function ofType(graph: InfraGraph, type: string): Resource[] {
  return graph.resources.filter((r) => r.type === type);
}

/** The resource with this logical name and type, if any. */
export function named(graph: InfraGraph, type: string, name: string): Resource | undefined {
  return graph.resources.find((r) => r.type === type && r.name === name);
}

/** The resource whose made-up ARN is this one. */
export function byArn(graph: InfraGraph, arn: unknown): Resource | undefined {
  return graph.resources.find((r) => r.state.arn === arn);
}

/** Every statement of a role's inline policies. */
export function roleStatements(role: Resource | undefined): Statement[] {
  const policies = (role?.inputs.inlinePolicies ?? []) as { policy?: unknown }[];
  return policies.flatMap((p) => (p.policy === undefined ? [] : statementsOf(p.policy)));
}

/** Each function SST built, joined with its Lambda and role (SST names them `${id}Function`, `${id}Role`). */
export function functions(graph: InfraGraph): FunctionView[] {
  return graph.builds.flatMap((build) => {
    const lambda = named(graph, "aws:lambda/function:Function", `${build.functionID}Function`);
    if (!lambda) return [];
    const role = byArn(graph, lambda.inputs.role);
    const env = (lambda.inputs.environment as { variables?: Record<string, string> } | undefined)
      ?.variables;
    return [{ build, lambda, role, environment: env ?? {}, statements: roleStatements(role) }];
  });
}

/** Whether a statement allows `action` (wildcards included) on `arn` (or on everything). */
export function allows(statement: Statement, action: string, arn: string): boolean {
  if (statement.effect !== "Allow") return false;
  const matches = (pattern: string, value: string) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(
      value,
    );
  return (
    statement.actions.some((a) => matches(a, action)) &&
    statement.resources.some((r) => matches(r, arn))
  );
}
