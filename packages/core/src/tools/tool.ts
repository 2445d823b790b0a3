/**
 * A tool that plans can call. Its input schema is zod (exported as JSON Schema for
 * the planner and `GET /v1/tools`); its result is any JSON value.
 */

import type * as z from "zod";
import type { FileReader } from "../files/file-refs";
import type { LlmSession } from "../llm/types";
import type { NamespaceConfig, ResponseFormat } from "../model";
import type { OutboundPolicy } from "../net/outbound-policy";
import type { Blobs } from "../ports/blobs";
import type { SandboxPort } from "../ports/sandbox";
import type { Tracer } from "../ports/tracer";
import type { WaitingRecord } from "../store/records";

export interface ToolContext {
  tenantId: string;
  taskId: string;
  branch: string;
  /** Derived from (task, branch, parent commit): the same on every retry of the step. */
  idempotencyKey: string;
  namespace: NamespaceConfig;
  goal: string | null;
  responseFormat: ResponseFormat;
  llm: LlmSession;
  sandbox: SandboxPort;
  blobs: Blobs;
  /** Where this task's blobs go (`t/{tenant}/{task}`). */
  blobPrefix: string;
  /** The tenant's uploaded files, for `{"$file": id}` references; none: such a reference is not found. */
  files?: FileReader;
  /** What outgoing requests may reach: the operator's open ranges and the stack's own ports. */
  outbound: OutboundPolicy;
  /**
   * The names the calling fills when it names several `output_vars`: a tool that
   * can shape its answer (`llm_generate`) answers an object with exactly these keys.
   */
  outputVars?: readonly string[];
  /** The branch's wait at this head, when it waits or waited (`ask_human` reads its answer). */
  waiting?: WaitingRecord | null;
  /** The step's clock, in epoch milliseconds. */
  now?: number;
  /** Spans around tool calls (`execute_tool {name}`), where tracing is configured. */
  tracer?: Tracer;
}

export interface ToolResult {
  value: unknown;
  /** Extra facts for the commit (code attempts, HTTP status, artifact refs). */
  details?: Record<string, unknown>;
}

/** Where a tool comes from, as `GET /v1/tools` and the console show it. */
export type ToolSourceKind = "builtin" | "code" | "http" | "mcp";

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type
export interface Tool<I = any> {
  name: string;
  description: string;
  /**
   * What the tool takes. The built-in tools define it as a getter over a schema
   * built on its first read (`buildOnce`), so that a worker's cold start builds
   * no tool's schema until a step calls it or the planner describes it.
   */
  input: z.ZodType<I>;
  /** Where the tool comes from; built-in when absent. */
  source?: ToolSourceKind;
  /**
   * The input's JSON Schema as its author wrote it (code, HTTP and MCP tools), shown
   * to the planner and on `GET /v1/tools` instead of a round trip through zod.
   */
  inputSchema?: Record<string, unknown>;
  /**
   * Loads what checking `input` needs, when that is not loaded at start (ask_human:
   * the JSON Schema compiler, `json-schema/compile.ts`). `input` is synchronous, so
   * whoever parses it awaits this first: the registry for the tools it resolves,
   * the VM before it parses a call's input.
   */
  prepare?: () => Promise<void>;
  run(input: I, context: ToolContext): Promise<ToolResult>;
}

/** What an instruction asks for when it must wait (thrown, and caught by the step). */
export type WaitSpec = Pick<WaitingRecord, "kind" | "until" | "question" | "schema" | "expires_at">;

/** Thrown by an instruction that cannot finish yet; `runStep` turns it into a waiting branch. */
export class WaitRequest extends Error {
  constructor(readonly spec: WaitSpec) {
    super(spec.kind === "time" ? `wait until ${spec.until}` : `wait for an answer`);
    this.name = "WaitRequest";
  }
}
