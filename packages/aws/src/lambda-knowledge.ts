/**
 * `@stackvm/aws/lambda-knowledge`: the adapters only the knowledge function (and
 * the local stack) uses: LanceDB for the index and the embeddings clients, each
 * built on first use. The worker does not import this module, so neither
 * LanceDB nor an embeddings client is in its bundle.
 */
export { lazyBedrockEmbeddings, lazyLanceIndex, lazyOpenAiEmbeddings } from "./lazy-knowledge";
