/** What handling a step or member message came to (`runStep`, `runMember`): logged and traced by the worker. */
import type { Status } from "../model";

export type StepOutcome =
  | { outcome: "committed" | "repaired"; commit: string; status: Status }
  | { outcome: "duplicate" }
  | { outcome: "resumed"; head: string }
  /** The branch waits (`vm/wait.ts`): nothing was committed. */
  | { outcome: "waiting" }
  /** A parallel group began or went on (`vm/group.ts`); a member's result was held (`vm/member.ts`). */
  | { outcome: "grouped" | "member" }
  | { outcome: "gone" };
