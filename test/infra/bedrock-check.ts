/**
 * The Bedrock check of the resource graph: with LLM_PROVIDER=bedrock the
 * worker may `bedrock:InvokeModel` (which Converse needs) on each configured
 * model and on nothing else; no other function, and no worker of another
 * provider, may use Bedrock at all. The ARNs wanted are worked out here from
 * the worker's environment, apart from infra/bedrock.ts, so that a mistake
 * there shows.
 */
import {
  ACCOUNT,
  allows,
  functions,
  type InfraGraph,
  PARTITION,
  REGION,
  type Statement,
} from "./infra-graph";

/** The functions that call Bedrock: the worker (LLM steps) and the knowledge function (ingest's LLM calls, embeddings). */
const BEDROCK_USERS = [
  "packages/functions/src/worker.handler",
  "packages/functions/src/knowledge-function.handler",
];

/**
 * Each model as a foundation model in the Bedrock region, or, for a
 * cross-region inference profile (`us.` ...), the profile and its model in any
 * region; Titan Text Embeddings v2 when no embedding model is set.
 */
export function bedrockArnsWanted(env: Record<string, string>): string[] {
  const region = env.BEDROCK_REGION ?? REGION;
  const models = [
    env.LLM_MODEL,
    env.REASON_LLM_MODEL,
    env.EVAL_LLM_MODEL,
    env.EMBEDDING_MODEL ?? "amazon.titan-embed-text-v2:0",
  ].filter((m): m is string => m !== undefined);
  const arns = models.flatMap((model) => {
    const profile = /^(us|eu|apac|global|us-gov|jp|au|ca)\.(.+)$/.exec(model);
    if (profile === null) return [`arn:${PARTITION}:bedrock:${region}::foundation-model/${model}`];
    return [
      `arn:${PARTITION}:bedrock:${region}:${ACCOUNT}:inference-profile/${model}`,
      `arn:${PARTITION}:bedrock:*::foundation-model/${profile[2]}`,
    ];
  });
  return [...new Set(arns)];
}

const bedrockActions = (s: Statement) =>
  s.effect === "Allow" ? s.actions.filter((a) => a === "*" || a.startsWith("bedrock:")) : [];

export function bedrockCheck(graph: InfraGraph): string[] {
  const problems: string[] = [];
  for (const fn of functions(graph)) {
    const name = fn.build.functionID;
    const onBedrock =
      BEDROCK_USERS.includes(fn.build.handler) && fn.environment.LLM_PROVIDER === "bedrock";
    const wanted = onBedrock ? bedrockArnsWanted(fn.environment) : [];
    for (const s of fn.statements) {
      const actions = bedrockActions(s);
      if (actions.length === 0) continue;
      if (!onBedrock) {
        problems.push(`the ${name} function may ${actions.join(", ")}; it must not use Bedrock`);
        continue;
      }
      if (actions.some((a) => a !== "bedrock:InvokeModel"))
        problems.push(
          `the ${name} function may ${actions.join(", ")}; on Bedrock it may only InvokeModel`,
        );
      const beyond = s.resources.filter((r) => !wanted.includes(r));
      if (beyond.length > 0)
        problems.push(
          `the ${name} function may use Bedrock on ${beyond.join(", ")}, not a configured model`,
        );
    }
    for (const arn of wanted) {
      if (!fn.statements.some((s) => allows(s, "bedrock:InvokeModel", arn)))
        problems.push(`the ${name} function may not bedrock:InvokeModel on ${arn}`);
    }
  }
  return problems;
}
