/**
 * What `npm run walk` runs (scripts/step-walk.ts), bundled with a note at the
 * start of each of core's functions: an ordinary task and a parallel group in
 * the in-memory system, each queue message walked on its own. Writes the walks
 * as JSON to standard output.
 */
import { CreateTaskInput } from "@stackvm/core/api-records";
import { FakeLlm, memorySystem } from "@stackvm/core/testing";
import type { Walked } from "./step-walk";

const walk: string[] = [];
let walking = false;
let runSteps = 0;
/** What every noted function calls first: its file, and its name when it is a declared function. */
(globalThis as { __walk?: (file: string, name: string) => void }).__walk = (file, name) => {
  if (!walking) return;
  walk.push(file);
  if (name === "runStep") runSteps += 1;
};

const sys = memorySystem({ llm: new FakeLlm(() => "ok") });
const walked: Walked[] = [];
let task = "";
const drain = sys.queue.drain.bind(sys.queue);
// Each delivery the system's drain makes is walked on its own.
sys.queue.drain = (handler, options) =>
  drain(async (message, ids) => {
    const body = JSON.parse(message.body) as { kind?: string; member?: number };
    walk.length = 0;
    runSteps = 0;
    walking = true;
    try {
      await handler(message, ids);
    } finally {
      walking = false;
      walked.push({
        task,
        kind: body.kind ?? "step",
        ...(body.member === undefined ? {} : { member: body.member }),
        runSteps,
        files: [...walk],
      });
    }
  }, options);

const call = (seq_no: number, prompt: string, output_vars: string) => ({
  seq_no,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars },
});
const plans = {
  ordinary: [
    { seq_no: 0, type: "assign", parameters: { greeting: "hello" } },
    { seq_no: 1, type: "assign", parameters: { final_answer: "${greeting}, world" } },
  ],
  group: [
    call(0, "one", "a"),
    call(1, "two", "b"),
    call(2, "three", "c"),
    call(3, "four", "d"),
    { seq_no: 4, type: "assign", parameters: { final_answer: "${a} ${b} ${c} ${d}" } },
  ],
};
for (const [name, plan] of Object.entries(plans)) {
  task = name;
  const created = await sys.tasks.create("walk", CreateTaskInput.parse({ plan }));
  await sys.drain();
  const ended = await sys.tasks.get("walk", created.task.task_id);
  if (ended.status !== "completed") throw new Error(`the ${name} task ended ${ended.status}`);
}
process.stdout.write(JSON.stringify(walked));
