/**
 * The plan language, version 1 (`shared/spec/plan-language.md`), as zod schemas.
 * These schemas give the shape only; `validatePlan` adds the semantic checks
 * (jump targets, tools, references, reachability of `final_answer`).
 */
import * as z from "zod";
import {
  FINAL_ANSWER,
  hasZone,
  MAX_PLAN_LENGTH,
  MAX_WAIT_SECONDS,
  waitSecondsProblem,
  zonedTime,
} from "./plan-values";
import { VariableName } from "./variable-name";

export {
  FINAL_ANSWER,
  hasZone,
  MAX_PLAN_LENGTH,
  MAX_WAIT_SECONDS,
  VariableName,
  waitSecondsProblem,
  zonedTime,
};

export const SeqNo = z.number().int().min(0);

export const AssignInstruction = z.object({
  seq_no: SeqNo,
  type: z.literal("assign"),
  parameters: z.record(VariableName, z.unknown()),
});
export type AssignInstruction = z.infer<typeof AssignInstruction>;

export const CallingInstruction = z.object({
  seq_no: SeqNo,
  type: z.literal("calling"),
  parameters: z.object({
    tool_name: z.string().min(1),
    tool_params: z.record(z.string(), z.unknown()).default({}),
    output_vars: z.union([VariableName, z.array(VariableName)]).optional(),
  }),
  /** 1.1: marks a parallel group explicitly (`plan/groups.ts`); consecutive members share it. */
  group: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
});
export type CallingInstruction = z.infer<typeof CallingInstruction>;

export const ConditionalJump = z.object({
  condition_prompt: z.string().min(1),
  context: z.unknown().optional(),
  jump_if_true: SeqNo,
  jump_if_false: SeqNo,
});
export const UnconditionalJump = z.object({ target_seq: SeqNo });

export const JmpInstruction = z.object({
  seq_no: SeqNo,
  type: z.literal("jmp"),
  parameters: z.union([ConditionalJump, UnconditionalJump]),
});
export type JmpInstruction = z.infer<typeof JmpInstruction>;

export const ReasoningInstruction = z.object({
  seq_no: SeqNo,
  type: z.literal("reasoning"),
  parameters: z.object({
    chain_of_thoughts: z.string().optional(),
    dependency_analysis: z.string().optional(),
  }),
});
export type ReasoningInstruction = z.infer<typeof ReasoningInstruction>;

/**
 * `wait` for a number of seconds (a number, or a `${var}` reference that resolves
 * to one; the VM holds the resolved value to the same bound). A number written as
 * text (`"1e9"`) is held to it too: it went past the year before.
 */
export const WaitForSeconds = z
  .object({
    seconds: z.union([
      z.number().positive().max(MAX_WAIT_SECONDS),
      z
        .string()
        .min(1)
        .refine((text) => text.includes("${") || waitSecondsProblem(Number(text)) === null, {
          message: `not a number of seconds from 1 to ${MAX_WAIT_SECONDS} (a year)`,
        }),
    ]),
  })
  .strict();

/** `wait` until a time: ISO 8601 with a zone (or a `${var}` reference that resolves to one). */
export const WaitUntil = z
  .object({
    until: z
      .string()
      .min(1)
      .max(64)
      .refine(
        (text) => text.includes("${") || !Number.isNaN(zonedTime(text)),
        "not an ISO 8601 time with its zone, on a day and at a time that exist",
      ),
  })
  .strict();

/** Version 1.1: the branch resumes after a time, holding nothing meanwhile (`vm/wait.ts`). */
export const WaitInstruction = z.object({
  seq_no: SeqNo,
  type: z.literal("wait"),
  parameters: z.union([WaitForSeconds, WaitUntil]),
});
export type WaitInstruction = z.infer<typeof WaitInstruction>;

export const Instruction = z.discriminatedUnion("type", [
  AssignInstruction,
  CallingInstruction,
  JmpInstruction,
  ReasoningInstruction,
  WaitInstruction,
]);
export type Instruction = z.infer<typeof Instruction>;

/** A plan: a JSON array of instructions, at most {@link MAX_PLAN_LENGTH} of them. */
export const Plan = z.array(Instruction).min(1).max(MAX_PLAN_LENGTH);
export type Plan = z.infer<typeof Plan>;

/** An instruction as far as validation could read it. */
export interface FlowInstruction {
  index: number;
  seqNo: number | null;
  /** A known instruction type, or null. */
  type: string | null;
  parameters: unknown;
}
