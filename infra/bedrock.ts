/**
 * Amazon Bedrock for the worker when the `LlmProvider` secret is `bedrock`:
 * `bedrock:InvokeModel` (which also authorizes Converse) on the configured
 * models only, the chat models and the embedding model, never `*`. A
 * foundation-model id is granted as its ARN in the Bedrock region; a
 * cross-region inference profile (`us.`, `eu.`, `apac.`, `global.` ...) as the
 * profile's ARN and its model's ARN in every region, since the profile sends a
 * request to any region of its group. Changing a model means deploying again.
 */
import { DEFAULT_EMBEDDING_MODELS } from "../packages/functions/src/llm-provider";
import { bedrockModelArns } from "./bedrock-arns";
import { llmSecrets, reasonLlmSecrets } from "./secrets";

/** The worker's Bedrock statement: none unless the provider is `bedrock`. */
export const bedrockPermissions = $resolve({
  provider: llmSecrets.provider.value,
  reasonProvider: reasonLlmSecrets.provider.value,
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
}).apply(({ provider, reasonProvider, models, bedrockRegion, region, partition, account }) => {
  // The steps or the plans (ReasonLlmProvider) on Bedrock: the configured models, either way.
  if (provider !== "bedrock" && reasonProvider !== "bedrock") return [];
  const [chat, reason, evaluation, embedding] = models;
  const place = { partition, region: bedrockRegion || region, account };
  const configured = [chat, reason, evaluation, embedding || DEFAULT_EMBEDDING_MODELS.bedrock];
  return [{ actions: ["bedrock:InvokeModel"], resources: bedrockModelArns(configured, place) }];
});
