/**
 * The body that continues a task as the next turn of its thread
 * (`POST /v1/tasks/{id}/continue`): the new goal, the branch whose answer it
 * continues, and what else a start takes. The namespace is the earlier turn's.
 */
import * as z from "zod";
import { BranchName } from "../model";
import { VariableName } from "../plan/variable-name";
import { Budget } from "../record-fields";
import { DisplayName } from "./display-text";

export const ContinueTaskInput = z
  .object({
    goal: z
      .string()
      .min(1)
      .max(10_000)
      .describe("The next turn's goal: what to do with the earlier turns' answers and variables"),
    branch: BranchName.optional().describe(
      "The branch whose answer this turn continues (a fork continues a new line of the thread); default: the task's result branch",
    ),
    inputs: z
      .record(VariableName, z.unknown())
      .default({})
      .describe("More input variables; one named like an earlier turn's variable replaces it"),
    name: DisplayName(200).optional(),
    response_format: z.record(z.string(), z.unknown()).nullable().optional(),
    budget: Budget.default({ max_steps: 200 }),
    webhook_url: z.string().url().max(2048).optional(),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type ContinueTaskInput = z.infer<typeof ContinueTaskInput>;
