/**
 * A tool that plans can call. Its input schema is zod (exported as JSON Schema for
 * the planner and `GET /v1/tools`); its result is any JSON value.
 */
import type * as z from "zod";
import type { LlmSession } from "../llm/types";
import type { NamespaceConfig, ResponseFormat } from "../model";
import type { Blobs } from "../ports/blobs";
import type { SandboxPort } from "../ports/sandbox";

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
  /** True in local mode: loopback URLs may be allowed where AWS would refuse them. */
  localMode: boolean;
}

export interface ToolResult {
  value: unknown;
  /** Extra facts for the commit (code attempts, HTTP status, artifact refs). */
  details?: Record<string, unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type
export interface Tool<I = any> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  run(input: I, context: ToolContext): Promise<ToolResult>;
}
