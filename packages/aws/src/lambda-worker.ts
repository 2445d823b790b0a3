/**
 * `@stackvm/aws/lambda-worker`: the adapters only the worker uses, reached
 * through dynamic `import()` (see lambda.ts), in a module of their own so that
 * the other functions' bundles do not carry their chunks.
 */
export type { BedrockOptions } from "./bedrock-llm";
export {
  lazyBedrockLlm,
  lazyLambdaKnowledge,
  lazyLambdaSandbox,
  lazyOpenAiLlm,
} from "./lazy-worker-adapters";
