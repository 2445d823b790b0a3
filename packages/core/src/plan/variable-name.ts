/**
 * A variable name as plans use them, apart from `schema.ts`: a task's start
 * input names its variables too (`service/task-input.ts`), and checking one
 * need not build the whole plan language. `schema.ts` re-exports it.
 */
import * as z from "zod";

/** A variable name as plans use them (`${name}` references). */
export const VariableName = z
  .string()
  // As StackVM: any run of letters, digits and _ (`2pc_config_docs` is a name).
  .regex(/^[A-Za-z0-9_]+$/, "a variable name is letters, digits and _")
  // Zod and plain objects treat this key as the prototype: the variable would vanish.
  .refine((name) => name !== "__proto__", "__proto__ cannot be a variable name");
