/**
 * A model per role on its own server (issue 43): the plans on one scripted server
 * (`REASON_OPENAI_BASE_URL`, `REASON_OPENAI_API_KEY`, `REASON_LLM_MODEL`), the steps
 * on another (`OPENAI_*`, `LLM_MODEL`), each with its own temperature. Each call
 * goes to its role's server with that server's key, asserted on both servers'
 * logs; the doctor names each role's endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../support/llm-server";
import { startTestStack, type TestStack } from "../support/stack";

let planner: ScriptedLlm;
let t: TestStack;

const PLAN = {
  reasoning: "one generation",
  plan: [
    {
      seq_no: 0,
      type: "calling",
      parameters: {
        tool_name: "llm_generate",
        tool_params: { prompt: "Name a temple in Kyoto." },
        output_vars: ["final_answer"],
      },
    },
  ],
};

beforeAll(async () => {
  // The reasoning server takes its own key only: the steps' key would be a 401 here.
  planner = await startScriptedLlm({ apiKey: "reason-key" });
  t = await startTestStack({
    sandbox: { run: async () => Promise.reject(new Error("no sandbox in this test")) },
    doctorCacheMs: 0,
    env: {
      REASON_OPENAI_BASE_URL: planner.url,
      REASON_OPENAI_API_KEY: "reason-key",
      REASON_LLM_MODEL: "planner-model",
      LLM_TEMPERATURE: "0.7",
      REASON_LLM_TEMPERATURE: "0.1",
    },
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await planner?.close();
});

describe("the planner on one server and the steps on another", () => {
  it("sends each call to its role's server, with that server's key, model and temperature", async () => {
    planner.queue("plan", PLAN);
    t.llm.on("text", "Kinkaku-ji");
    const created = await t.api("POST", "/v1/tasks", { goal: "Name a temple in Kyoto." });
    expect(created.status).toBe(202);
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    expect(task.final_answer).toBe("Kinkaku-ji");

    // The planner's server saw the plan and nothing else; the steps' server the step only.
    expect(planner.requests.map((r) => [r.schemaName, r.model])).toEqual([
      ["plan", "planner-model"],
    ]);
    expect(t.llm.requests.map((r) => [r.schemaName, r.model])).toEqual([
      ["text", "scripted-model"],
    ]);
    expect(planner.requests[0]!.headers.authorization).toBe("Bearer reason-key");
    expect(t.llm.requests[0]!.headers.authorization).toBe("Bearer test-key");
    expect(planner.requests[0]!.body.temperature).toBe(0.1);
    expect(t.llm.requests[0]!.body.temperature).toBe(0.7);
  });

  it("sends a plan update to the planner's server too", async () => {
    planner.reset();
    t.llm.reset();
    planner.queue("plan", PLAN);
    planner.queue("plan_update", {
      reasoning: "answer directly",
      plan: [{ seq_no: 0, type: "assign", parameters: { final_answer: "Ryoan-ji" } }],
      resume_at: 0,
    });
    t.llm.on("text", { fault: "status", status: 400, message: "the steps' server refuses" });
    const created = await t.api("POST", "/v1/tasks", { goal: "Name another temple." });
    const task = await t.waitForTask(created.body.task_id);
    expect(task.status, JSON.stringify(task.error)).toBe("completed");
    expect(task.final_answer).toBe("Ryoan-ji");
    expect(planner.requests.map((r) => r.schemaName)).toEqual(["plan", "plan_update"]);
    expect(t.llm.requests.map((r) => r.schemaName)).toEqual(["text"]);
  });

  it("has the doctor check each role's model at its own server, naming it", async () => {
    planner.reset();
    t.llm.reset();
    planner.on("text", "ok");
    t.llm.on("text", "ok");
    const doctor = await t.api("GET", "/v1/doctor");
    expect(doctor.status).toBe(200);
    const llm = (doctor.body.checks as Array<{ name: string; status: string; detail: string }>)
      .filter((c) => c.name === "llm")
      .map((c) => [c.status, c.detail.replace(/ in \d+ ms$/, "")]);
    expect(llm).toEqual(
      expect.arrayContaining([
        ["ok", `model scripted-model (default) answered at ${t.llm.url}`],
        ["ok", `model planner-model (reason, eval) answered at ${planner.url}`],
      ]),
    );
    expect(planner.requests.map((r) => r.model)).toEqual(["planner-model"]);
    expect(t.llm.requests.map((r) => r.model)).toEqual(["scripted-model"]);
  });
});
