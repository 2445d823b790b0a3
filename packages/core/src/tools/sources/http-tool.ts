/**
 * HTTP tools: an integrator's endpoint that plans call like any tool. The worker
 * POSTs the tool's input as JSON, signed with the tenant's webhook secret in the
 * Standard Webhooks scheme (the receiver verifies it with the same few lines as
 * for outgoing webhooks), with the step's idempotency key both as `webhook-id`
 * and as `Idempotency-Key`, so a retried step is the same delivery. The answer
 * must be JSON, and is checked against the tool's output schema when it has one.
 * Every request goes through `guardedFetch`: the namespace's allowed hosts, no
 * private, loopback or metadata address (loopback only in local mode, for a host
 * the namespace lists by itself).
 */
import * as z from "zod";
import { buildOnce } from "../../build-once";
import { StepError } from "../../errors";
import { compileJsonSchema, loadJsonSchemaCompiler } from "../../json-schema/compile";
import type { NamespaceConfig } from "../../model";
import { guardedFetch } from "../../net/guarded-fetch";
import { matchHost, normalizeHost } from "../../net/host-allow-list";
import { localUrlProblem, privateTarget } from "../../net/local-url";
import type { OutboundPolicy } from "../../net/outbound-policy";
import type { Resolver } from "../../net/resolver";
import { webhookHeaders } from "../../webhooks/signature";
import type { ToolRecord, ToolSource } from "../registry";
import type { Tool } from "../tool";
import { ToolDescriptionField, ToolNameField } from "../tool-fields";

/** A tool's JSON Schema of an object, as integrators write it. */
export const ObjectSchema = buildOnce(() =>
  z.record(z.string(), z.unknown()).refine((schema) => schema.type === "object", {
    message:
      'a schema must be a JSON Schema of an object ({"type": "object", "properties": {...}})',
  }),
);

/** The body of `POST /v1/namespaces/{name}/http-tools`. */
export const HttpToolDefinition = buildOnce(() =>
  z
    .object({
      name: ToolNameField(),
      description: ToolDescriptionField(),
      url: z.url({ protocol: /^https?$/, error: "url must be an absolute https:// URL" }).max(2048),
      method: z.enum(["POST", "PUT", "PATCH"]).default("POST"),
      input_schema: ObjectSchema(),
      output_schema: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
);
export type HttpToolDefinition = z.infer<ReturnType<typeof HttpToolDefinition>>;

/** Limits of one call: the same defaults as `http_request`. */
export interface HttpToolOptions {
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** For tests: name resolution that stays on this machine. */
  resolve?: Resolver;
}

/**
 * Turns a JSON Schema into the zod schema that checks values against it: bounded,
 * compiled once, its patterns run in linear time ({@link compileJsonSchema}).
 *
 * @throws ValidationError `invalid_schema` naming `what` when it cannot check values.
 */
export function schemaOf(schema: Record<string, unknown>, what: string): z.ZodType {
  return compileJsonSchema(schema, what);
}

/**
 * Says why an HTTP tool's or MCP server's URL cannot be used by the namespace, or
 * null: https (http only for a loopback or private address the operator opened),
 * an address the guard lets through, and the host in the namespace's
 * `allowed_hosts`. The guard checks again at each connection; this is the early,
 * clear refusal when the server is registered.
 */
export function toolUrlProblem(
  url: string,
  namespace: Pick<NamespaceConfig, "name" | "allowed_hosts">,
  outbound: OutboundPolicy,
): string | null {
  const parsed = new URL(url);
  const host = normalizeHost(parsed.hostname);
  const local = localUrlProblem(parsed, outbound);
  if (local !== null) return local;
  // Past the check above, a private target is one the operator opened.
  if (parsed.protocol !== "https:" && privateTarget(parsed) === null) {
    return `${url} is not https: use an https:// URL (plain http is only for a loopback or private address the operator opened with STACKVM_OPEN_PRIVATE_RANGES)`;
  }
  if (matchHost(host, namespace.allowed_hosts) === undefined) {
    return `the host '${host}' is not in the allowed_hosts of the namespace '${namespace.name}': add it with PUT /v1/namespaces/${namespace.name} first`;
  }
  return null;
}

/** What an HTTP tool needs from the system. */
export interface HttpToolDeps extends HttpToolOptions {
  /** The tenant's webhook signing secret (`WebhookService.secret`). */
  secret(tenant: string): Promise<string>;
  /** Unix milliseconds, for `webhook-timestamp`. */
  now(): number;
}

/** Builds the tool of a stored HTTP tool record. */
export function httpTool(record: ToolRecord, deps: HttpToolDeps): Tool<Record<string, unknown>> {
  const definition = HttpToolDefinition().parse({
    name: record.name,
    description: record.description,
    url: record.url,
    method: record.method,
    input_schema: record.input_schema,
    ...(record.output_schema ? { output_schema: record.output_schema } : {}),
  });
  const { name, url, method } = definition;
  const input = schemaOf(definition.input_schema, `http tool '${name}': input_schema`);
  const output = definition.output_schema
    ? schemaOf(definition.output_schema, `http tool '${name}': output_schema`)
    : null;
  return {
    name,
    description: definition.description,
    input: input as z.ZodType<Record<string, unknown>>,
    source: "http",
    inputSchema: definition.input_schema,
    async run(toolInput, context) {
      const body = JSON.stringify(toolInput);
      const seconds = Math.floor(deps.now() / 1000);
      const signed = webhookHeaders(
        await deps.secret(context.tenantId),
        context.idempotencyKey,
        seconds,
        body,
      );
      const allowedHosts = context.namespace.allowed_hosts;
      const response = await guardedFetch(
        {
          url,
          method,
          body,
          headers: {
            "content-type": "application/json",
            "user-agent": "stackvm/1",
            "idempotency-key": context.idempotencyKey,
            ...signed,
          },
        },
        {
          allowedHosts,
          policy: context.outbound,
          maxRedirects: 0,
          ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
          ...(deps.maxResponseBytes ? { maxResponseBytes: deps.maxResponseBytes } : {}),
          ...(deps.resolve || context.outbound.resolve
            ? { resolve: (deps.resolve ?? context.outbound.resolve)! }
            : {}),
        },
      );
      const text = response.body.toString("utf8");
      if (response.status < 200 || response.status > 299) {
        throw new StepError(
          "http_tool_status",
          `the HTTP tool '${name}' answered ${response.status}: ${text.slice(0, 300)}`,
          { tool: name, status: response.status },
        );
      }
      let value: unknown;
      try {
        value = text.trim() === "" ? null : JSON.parse(text);
      } catch {
        throw new StepError(
          "http_tool_bad_output",
          `the HTTP tool '${name}' answered something that is not JSON: ${text.slice(0, 200)}`,
          { tool: name },
        );
      }
      if (output) {
        const checked = output.safeParse(value);
        if (!checked.success) {
          throw new StepError(
            "http_tool_bad_output",
            `the answer of the HTTP tool '${name}' does not match its output_schema: ${z.prettifyError(checked.error)}`,
            { tool: name, issues: checked.error.issues },
          );
        }
      }
      return { value, details: { http_tool: name, status: response.status } };
    },
  };
}

/** The registry's source of HTTP tools. */
export function httpToolSource(deps: HttpToolDeps): ToolSource {
  return {
    kind: "http",
    async tools(_tenant, _namespace, record) {
      await loadJsonSchemaCompiler();
      return [httpTool(record, deps)];
    },
  };
}
