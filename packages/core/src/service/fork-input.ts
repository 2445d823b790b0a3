/**
 * What a fork asks for (`POST /v1/tasks/{id}/branches`): a commit to start from
 * and at most one change (a suggestion for the planner, a new plan, or one
 * instruction replaced). `fork-pending.ts` checks it and turns it into the
 * work the fork's first step does.
 */
import * as z from "zod";
import { BranchName } from "../model";

export const ForkInput = z
  .object({
    from_commit: z.string().min(1).max(64),
    name: BranchName.optional(),
    suggestion: z.string().min(1).max(10_000).optional(),
    plan: z.array(z.unknown()).optional(),
    step: z
      .object({ seq_no: z.number().int().min(0), instruction: z.unknown() })
      .strict()
      .optional(),
  })
  .strict()
  .refine((f) => [f.suggestion, f.plan, f.step].filter((x) => x !== undefined).length <= 1, {
    message: "give at most one of suggestion, plan and step",
  });
export type ForkInput = z.infer<typeof ForkInput>;
