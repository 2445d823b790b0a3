/**
 * Configuration, read once at start by each entry file and validated with zod: a
 * wrong or missing setting stops the start with a message naming it.
 */
import { type LlmConfig, loadLlmConfig } from "@stackvm/core";
import { z } from "zod";

const Env = z.object({
  AWS_REGION: z.string().min(1).default("us-east-1"),
  STACKVM_TABLE: z.string().min(1),
  STACKVM_QUEUE_URL: z.string().url(),
  STACKVM_DLQ_URL: z.string().url().optional(),
  STACKVM_BUCKET: z.string().min(1),
  STACKVM_SANDBOX_FUNCTION: z.string().min(1).optional(),
  STACKVM_ADMIN_KEY: z
    .string()
    .min(16, "STACKVM_ADMIN_KEY must be at least 16 characters")
    .optional(),
  STACKVM_PUBLIC_URL: z.string().url().optional(),
  STACKVM_MAX_PLAN_UPDATES: z.coerce.number().int().min(0).max(20).default(3),
  STACKVM_PLAN_REPAIRS: z.coerce.number().int().min(0).max(10).default(2),
  STACKVM_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
});

export interface RuntimeConfig {
  region: string;
  table: string;
  queueUrl: string;
  dlqUrl: string | null;
  bucket: string;
  sandboxFunction: string | null;
  adminKey: string | null;
  publicUrl: string | null;
  maxPlanUpdates: number;
  planRepairs: number;
  maxBodyBytes: number;
  openai: { apiKey: string | null; baseURL: string | null };
  llm: LlmConfig;
}

/** Thrown when configuration is wrong; its message names every bad setting. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Reads and checks the environment. Local mode passes defaults for what it owns. */
export function loadConfig(env: Record<string, string | undefined>): RuntimeConfig {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      `bad configuration: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  }
  const e = parsed.data;
  let llm: LlmConfig;
  try {
    llm = loadLlmConfig({ ...env, LLM_MODEL: env.LLM_MODEL ?? "gpt-4o-mini" });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    region: e.AWS_REGION,
    table: e.STACKVM_TABLE,
    queueUrl: e.STACKVM_QUEUE_URL,
    dlqUrl: e.STACKVM_DLQ_URL ?? null,
    bucket: e.STACKVM_BUCKET,
    sandboxFunction: e.STACKVM_SANDBOX_FUNCTION ?? null,
    adminKey: e.STACKVM_ADMIN_KEY ?? null,
    publicUrl: e.STACKVM_PUBLIC_URL ?? null,
    maxPlanUpdates: e.STACKVM_MAX_PLAN_UPDATES,
    planRepairs: e.STACKVM_PLAN_REPAIRS,
    maxBodyBytes: e.STACKVM_MAX_BODY_BYTES,
    openai: { apiKey: e.OPENAI_API_KEY ?? null, baseURL: e.OPENAI_BASE_URL ?? null },
    llm,
  };
}
