/**
 * Amazon Bedrock for the worker when the `LlmProvider` secret is `bedrock`:
 * `bedrock:InvokeModel` (which also authorizes Converse) on the configured
 * models only, the chat models and the embedding model, never `*`. A
 * foundation-model id is granted as its ARN in the Bedrock region; a
 * cross-region inference profile (`us.`, `eu.`, `apac.`, `global.` ...) as the
 * profile's ARN and its model's ARN in every region, since the profile sends a
 * request to any region of its group. Changing a model means deploying again.
 */
import { bedrockModelOf } from "../packages/core/src/llm/bedrock-prices";
import { DEFAULT_EMBEDDING_MODELS } from "../packages/functions/src/llm-provider";
import { llmSecrets } from "./secrets";

/** Where the ARNs point: the partition, the Bedrock region and the account. */
export interface BedrockPlace {
  partition: string;
  region: string;
  account: string;
}

/**
 * The ARNs `bedrock:InvokeModel` needs for these model ids (empty ids skipped).
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
      const base = bedrockModelOf(model);
      if (base === model) return [`arn:${partition}:bedrock:${region}::foundation-model/${model}`];
      return [
        `arn:${partition}:bedrock:${region}:${account}:inference-profile/${model}`,
        `arn:${partition}:bedrock:*::foundation-model/${base}`,
      ];
    });
  return [...new Set(arns)];
}

/** The worker's Bedrock statement: none unless the provider is `bedrock`. */
export const bedrockPermissions = $resolve({
  provider: llmSecrets.provider.value,
  models: [
    llmSecrets.model.value,
    llmSecrets.reasonModel.value,
    llmSecrets.evalModel.value,
    llmSecrets.embeddingModel.value,
  ],
  bedrockRegion: llmSecrets.bedrockRegion.value,
  region: aws.getRegionOutput({}).region,
  partition: aws.getPartitionOutput({}).partition,
  account: aws.getCallerIdentityOutput({}).accountId,
}).apply(({ provider, models, bedrockRegion, region, partition, account }) => {
  if (provider !== "bedrock") return [];
  const [chat, reason, evaluation, embedding] = models;
  const place = { partition, region: bedrockRegion || region, account };
  const configured = [chat, reason, evaluation, embedding || DEFAULT_EMBEDDING_MODELS.bedrock];
  return [{ actions: ["bedrock:InvokeModel"], resources: bedrockModelArns(configured, place) }];
});
