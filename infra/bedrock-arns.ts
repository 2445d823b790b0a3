/**
 * The ARNs `bedrock:InvokeModel` needs for model ids: a foundation model's in
 * the Bedrock region; a cross-region inference profile's (`us.`, `eu.`, `apac.`,
 * `global.` ...) and its model's in every region, since the profile sends a
 * request to any region of its group. Apart from bedrock.ts, which needs SST's
 * globals, so that a test can call it.
 */
import { bedrockModelOf } from "../packages/core/src/llm/bedrock-prices";

/** Where the ARNs point: the partition, the Bedrock region and the account. */
export interface BedrockPlace {
  partition: string;
  region: string;
  account: string;
}

/**
 * The ARNs `bedrock:InvokeModel` needs for these model ids (empty ids skipped);
 * throws, naming the secrets to set, for an id that is no Bedrock id (the
 * `gpt-4o-mini` that LlmModel defaults to, say).
 *
 * @example
 * bedrockModelArns(["us.amazon.nova-lite-v1:0"], { partition: "aws", region: "us-east-1", account: "123456789012" })
 * // ["arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-lite-v1:0",
 * //  "arn:aws:bedrock:*::foundation-model/amazon.nova-lite-v1:0"]
 */
export function bedrockModelArns(models: string[], place: BedrockPlace): string[] {
  const { partition, region, account } = place;
  const arns = models
    .filter((model) => model !== "")
    .flatMap((model) => {
      if (model.startsWith("arn:")) return [model];
      if (!model.includes(".")) {
        throw new Error(
          `LlmProvider is bedrock but '${model}' is no Bedrock model id (they name their provider first, e.g. amazon.nova-lite-v1:0): set LlmModel, ReasonLlmModel, EvalLlmModel and EmbeddingModel to Bedrock ids (npx sst secret set LlmModel <id>), then deploy`,
        );
      }
      const base = bedrockModelOf(model);
      if (base === model) return [`arn:${partition}:bedrock:${region}::foundation-model/${model}`];
      return [
        `arn:${partition}:bedrock:${region}:${account}:inference-profile/${model}`,
        `arn:${partition}:bedrock:*::foundation-model/${base}`,
      ];
    });
  return [...new Set(arns)];
}
