/**
 * The worker's Bedrock grant in the app's resource graph (SST's real
 * components under Pulumi's mocks, see sst-harness.ts): with LlmProvider
 * `bedrock`, `bedrock:InvokeModel` on the configured models' ARNs only. The
 * check is also shown to fail on graphs mutated by hand.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bedrockCheck } from "./bedrock-check";
import { handlers } from "./check-graph";
import { functions, type InfraGraph } from "./infra-graph";
import { evaluateInfra } from "./sst-harness";

const bedrockSecrets = {
  LlmProvider: "bedrock",
  OpenaiApiKey: "",
  OpenaiBaseUrl: "",
  LlmModel: "eu.amazon.nova-lite-v1:0",
  ReasonLlmModel: "anthropic.claude-sonnet-4-20250514-v1:0",
  EvalLlmModel: "",
  EmbeddingModel: "",
  BedrockRegion: "eu-central-1",
  // The plans on the steps' provider, with no server of their own.
  ReasonLlmProvider: "",
  ReasonOpenaiApiKey: "",
  ReasonOpenaiBaseUrl: "",
};

let onBedrock: InfraGraph;

// The default graph (an OpenAI-compatible server, no Bedrock) passes the same
// check in resource-graph.test.ts, with every other check.
beforeAll(async () => {
  onBedrock = await evaluateInfra({ secrets: bedrockSecrets });
});

const fnOf = (g: InfraGraph, handler: string) => {
  const view = functions(g).find((f) => f.build.handler === handler);
  if (!view) throw new Error(`no function with handler ${handler}`);
  return view;
};

const bedrockStatements = (g: InfraGraph, handler: string) =>
  fnOf(g, handler).statements.filter((s) => s.actions.some((a) => a.startsWith("bedrock:")));

describe("the worker on Bedrock", () => {
  it("may InvokeModel on the configured models and Titan embeddings in BedrockRegion, nothing else", () => {
    expect(bedrockStatements(onBedrock, handlers.worker)).toEqual([
      expect.objectContaining({
        effect: "Allow",
        actions: ["bedrock:InvokeModel"],
        resources: [
          "arn:aws:bedrock:eu-central-1:123456789012:inference-profile/eu.amazon.nova-lite-v1:0",
          "arn:aws:bedrock:*::foundation-model/amazon.nova-lite-v1:0",
          "arn:aws:bedrock:eu-central-1::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0",
          "arn:aws:bedrock:eu-central-1::foundation-model/amazon.titan-embed-text-v2:0",
        ],
      }),
    ]);
    expect(bedrockCheck(onBedrock)).toEqual([]);
  });

  it("gets LLM_PROVIDER and no OpenAI key in its environment", () => {
    const env = fnOf(onBedrock, handlers.worker).environment;
    expect(env.LLM_PROVIDER).toBe("bedrock");
    expect(env).not.toHaveProperty("OPENAI_API_KEY");
    expect(env).not.toHaveProperty("EVAL_LLM_MODEL");
  });

  it("keeps the functions other than the worker and the knowledge function off Bedrock", () => {
    const users: string[] = [handlers.worker, handlers.knowledge];
    for (const fn of functions(onBedrock).filter((f) => !users.includes(f.build.handler))) {
      expect(bedrockStatements(onBedrock, fn.build.handler)).toEqual([]);
    }
  });
});

describe("the Bedrock check on a mutated graph", () => {
  const mutated = (g: InfraGraph, mutate: (copy: InfraGraph) => void) => {
    const copy = structuredClone(g);
    mutate(copy);
    return copy;
  };
  /** The worker role's inline policy, as the graph holds it, parsed and written back. */
  const editPolicy = (
    g: InfraGraph,
    edit: (statements: { Action: string | string[]; Resource: string | string[] }[]) => void,
  ) => {
    const role = fnOf(g, handlers.worker).role!;
    const policies = role.inputs.inlinePolicies as { policy: string }[];
    for (const p of policies) {
      const doc = JSON.parse(p.policy);
      edit(doc.Statement);
      p.policy = JSON.stringify(doc);
    }
  };
  const isBedrock = (s: { Action: string | string[] }) =>
    [s.Action].flat().some((a) => a.startsWith("bedrock:"));

  it.each<[string, (g: InfraGraph) => void, RegExp]>([
    [
      "a grant on every resource",
      (g) =>
        editPolicy(g, (statements) => {
          for (const s of statements.filter(isBedrock)) s.Resource = "*";
        }),
      /may use Bedrock on \*, not a configured model/,
    ],
    [
      "a grant of every Bedrock action",
      (g) =>
        editPolicy(g, (statements) => {
          for (const s of statements.filter(isBedrock)) s.Action = "bedrock:*";
        }),
      /on Bedrock it may only InvokeModel/,
    ],
    [
      "a missing grant",
      (g) =>
        editPolicy(g, (statements) => {
          statements.splice(0, statements.length, ...statements.filter((s) => !isBedrock(s)));
        }),
      /may not bedrock:InvokeModel on arn:aws:bedrock:eu-central-1::foundation-model\/amazon\.titan/,
    ],
    [
      "a grant to a worker of another provider",
      (g) => {
        fnOf(g, handlers.worker).lambda.inputs.environment = {
          variables: { ...fnOf(g, handlers.worker).environment, LLM_PROVIDER: "openai" },
        };
      },
      /must not use Bedrock/,
    ],
  ])("fails on %s", (_what, mutate, problem) => {
    const problems = bedrockCheck(mutated(onBedrock, mutate));
    expect(problems.some((p) => problem.test(p))).toBe(true);
  });
});

describe("the plans alone on Bedrock (ReasonLlmProvider)", () => {
  it("may InvokeModel on the reasoning models only, the steps staying on their server", async () => {
    const graph = await evaluateInfra({
      secrets: {
        ReasonLlmProvider: "bedrock",
        ReasonOpenaiApiKey: "",
        ReasonOpenaiBaseUrl: "",
        ReasonLlmModel: "anthropic.claude-sonnet-4-20250514-v1:0",
        EvalLlmModel: "",
        BedrockRegion: "eu-central-1",
      },
    });
    expect(bedrockStatements(graph, handlers.worker)).toEqual([
      expect.objectContaining({
        actions: ["bedrock:InvokeModel"],
        resources: [
          "arn:aws:bedrock:eu-central-1::foundation-model/anthropic.claude-sonnet-4-20250514-v1:0",
        ],
      }),
    ]);
    const env = fnOf(graph, handlers.worker).environment;
    expect(env.REASON_LLM_PROVIDER).toBe("bedrock");
    expect(env.OPENAI_BASE_URL).toBe("https://llm.test/v1");
    expect(bedrockStatements(graph, handlers.knowledge)).toEqual([]);
    expect(fnOf(graph, handlers.knowledge).environment.REASON_LLM_PROVIDER).toBeUndefined();
  });
});
