/**
 * The critical-path ratio of `npm run bench` (issue 16, parallel groups): a plan
 * of four independent `llm_generate` calls and a combining one, on the local
 * stack with a scripted LLM that answers each call after `llmMs`. Its critical
 * path is two calls (a member, then the combining call); the ratio is the wall
 * time of the plan's five steps (from the plan commit to the last commit, by the
 * commits' own times) over that path. The same plan in a namespace with
 * `parallel_width: 1` (one member at a time) is the baseline, in the same run.
 */
import { startTestStack } from "../support/stack";

const gen = (seq: number, out: string, prompt: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: { tool_name: "llm_generate", tool_params: { prompt }, output_vars: out },
});

export const FOUR_PLUS_ONE = [
  gen(0, "a", "Tell about A."),
  gen(1, "b", "Tell about B."),
  gen(2, "c", "Tell about C."),
  gen(3, "d", "Tell about D."),
  gen(4, "final_answer", "Combine: ${a} | ${b} | ${c} | ${d}"),
];

export interface CriticalPathResult {
  llm_ms: number;
  critical_path_ms: number;
  /** Median wall times of the five steps, and their ratios to the critical path. */
  grouped_ms: number;
  sequential_ms: number;
  ratio: number;
  sequential_ratio: number;
  runs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function criticalPath(llmMs = 500, runs = 3): Promise<CriticalPathResult> {
  const t = await startTestStack({ concurrency: 8 });
  try {
    t.llm.on("text", async (request) => {
      await new Promise((r) => setTimeout(r, llmMs));
      return /Tell about/.test(String(request.messages.at(-1)?.content)) ? "fact" : "combined";
    });
    const put = await t.api("PUT", "/v1/namespaces/sequential", {
      allowed_tools: ["llm_generate"],
      parallel_width: 1,
    });
    if (put.status !== 200) throw new Error(`namespace: ${JSON.stringify(put.body)}`);
    const wall = async (namespace: string) => {
      const created = await t.api("POST", "/v1/tasks", { plan: FOUR_PLUS_ONE, namespace });
      if (created.status !== 202) throw new Error(JSON.stringify(created.body));
      const taskId = created.body.task_id as string;
      const done = await t.waitForTask(taskId);
      if (done.status !== "completed") throw new Error(`task ${taskId} ${done.status}`);
      const { body } = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=10`);
      const times = (body.commits as Array<{ created_at: string }>).map((c) =>
        Date.parse(c.created_at),
      );
      return Math.max(...times) - Math.min(...times);
    };
    const grouped: number[] = [];
    const sequential: number[] = [];
    for (let i = 0; i < runs; i++) {
      grouped.push(await wall("default"));
      sequential.push(await wall("sequential"));
    }
    const path = 2 * llmMs;
    const g = median(grouped);
    const s = median(sequential);
    return {
      llm_ms: llmMs,
      critical_path_ms: path,
      grouped_ms: g,
      sequential_ms: s,
      ratio: Math.round((g / path) * 100) / 100,
      sequential_ratio: Math.round((s / path) * 100) / 100,
      runs,
    };
  } finally {
    await t.stop();
  }
}

// `npx tsx test/bench/critical-path.ts`: this measurement alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await criticalPath();
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
