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

const bedrockInputs = $resolve({
  provider: llmSecrets.provider.value,
  reason: [
    reasonLlmSecrets.provider.value,
    reasonLlmSecrets.apiKey.value,
    reasonLlmSecrets.baseUrl.value,
  ],
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
});

type BedrockInputs = typeof bedrockInputs extends $util.Output<infer T> ? T : never;

/**
 * The Bedrock statement for the configured models: the steps' and the
 * embeddings' when `LlmProvider` is `bedrock`; the plans' and the evaluations'
 * when they are on Bedrock too (`ReasonLlmProvider`, or no server of their own),
 * and only for the worker, which alone makes those calls.
 */
function grant(inputs: BedrockInputs, plans: boolean) {
  const { provider, reason, models, bedrockRegion, region, partition, account } = inputs;
  const [chat, reasonModel, evaluation, embedding] = models;
  const stepsOn = provider === "bedrock";
  const ownServer = reason.some((value) => value !== "");
  const plansOn = ownServer ? reason[0] === "bedrock" : stepsOn;
  const withPlans = plansOn && (plans || !ownServer);
  const configured = [
    ...(stepsOn ? [chat] : []),
    ...(withPlans ? [reasonModel, evaluation] : []),
    ...(stepsOn ? [embedding || DEFAULT_EMBEDDING_MODELS.bedrock] : []),
  ];
  if (configured.length === 0) return [];
  const place = { partition, region: bedrockRegion || region, account };
  return [{ actions: ["bedrock:InvokeModel"], resources: bedrockModelArns(configured, place) }];
}

/** The knowledge function's Bedrock statement: none unless `LlmProvider` is `bedrock`. */
export const bedrockPermissions = bedrockInputs.apply((inputs) => grant(inputs, false));

/** The worker's: also the plans' models when they are on Bedrock (`ReasonLlmProvider`). */
export const workerBedrockPermissions = bedrockInputs.apply((inputs) => grant(inputs, true));
