/**
 * Request and response examples of the main routes, shown in `/openapi.json` and
 * `/docs`. Kept apart from the schemas: an example documents, it never validates.
 */

export const createTaskExample = {
  goal: "Find the three largest cities of Portugal and give their populations as a table",
  namespace: "default",
  budget: { max_steps: 50, max_cost_usd: 0.5 },
  webhook_url: "https://example.com/hooks/stackvm",
  metadata: { order: "A-1001" },
};

export const taskCreatedExample = {
  task_id: "tsk_8m2k4x9q1w7e5r3t6y0u",
  status: "queued",
  branch: "main",
  warnings: [],
};

/** A finished task; `webhook` appears on tasks that have a `webhook_url`. */
export const taskExample = {
  task_id: "tsk_8m2k4x9q1w7e5r3t6y0u",
  goal: "Find the three largest cities of Portugal and give their populations as a table",
  name: null,
  title: "Find the three largest cities of Portugal and give their populations as a table",
  namespace: "default",
  status: "completed",
  branch: "main",
  final_answer:
    "| city | population |\n|---|---|\n| Lisbon | 545,000 |\n| Porto | 232,000 |\n| Vila Nova de Gaia | 304,000 |",
  error: null,
  response_format: {},
  metadata: { order: "A-1001" },
  usage: { steps: 5, llm_calls: 3, input_tokens: 2140, output_tokens: 388, cost_usd: 0.0011 },
  created_at: "2026-03-27T10:00:00.000Z",
  updated_at: "2026-03-27T10:00:09.000Z",
  webhook: {
    url: "https://example.com/hooks/stackvm",
    deliveries: [
      {
        webhook_id: "msg_2b7f0c4e9a1d",
        type: "task.completed",
        status: "delivered",
        attempts: [
          {
            attempt: 1,
            at: "2026-03-27T10:00:09.100Z",
            status: 503,
            error: "the receiver answered 503",
            duration_ms: 41,
          },
          { attempt: 2, at: "2026-03-27T10:00:39.200Z", status: 200, error: null, duration_ms: 37 },
        ],
        created_at: "2026-03-27T10:00:09.050Z",
      },
    ],
  },
};
