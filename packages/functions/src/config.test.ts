import { describe, expect, it } from "vitest";
import { awsSystem } from "./aws-system";
import { loadConfig } from "./config";

const base = {
  STACKVM_TABLE: "t",
  STACKVM_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/steps.fifo",
  STACKVM_BUCKET: "b",
};
const target = {
  STACKVM_SCHEDULER_ROLE_ARN: "arn:aws:iam::123456789012:role/invoke",
  STACKVM_SCHEDULER_FUNCTION_ARN: "arn:aws:lambda:us-east-1:123456789012:function:scheduler",
  STACKVM_SCHEDULE_DLQ_ARN: "arn:aws:sqs:us-east-1:123456789012:schedules-dlq",
};

describe("the schedule groups in the configuration", () => {
  it("gives the worker its wake group, apart from the tenants' schedules", () => {
    const config = loadConfig({ ...base, ...target, STACKVM_WAKE_GROUP: "stackvm-prod-wakes" });
    expect(config.wakes).toEqual({
      group: "stackvm-prod-wakes",
      roleArn: target.STACKVM_SCHEDULER_ROLE_ARN,
      functionArn: target.STACKVM_SCHEDULER_FUNCTION_ARN,
      dlqArn: target.STACKVM_SCHEDULE_DLQ_ARN,
    });
    expect(config.schedules).toBeNull();
  });

  it("has no wakes without the group or without the role (waits then stay on the queue)", () => {
    expect(loadConfig({ ...base, ...target }).wakes).toBeNull();
    expect(loadConfig({ ...base, STACKVM_WAKE_GROUP: "stackvm-prod-wakes" }).wakes).toBeNull();
  });
});

describe("the LLM provider in the configuration", () => {
  it("is an OpenAI-compatible server unless LLM_PROVIDER says bedrock", () => {
    const config = loadConfig(base);
    expect(config.providers).toEqual({
      llm: "openai",
      embeddings: "openai",
      bedrock: { region: "us-east-1", endpoint: null },
    });
    expect(config.llm.models.default).toBe("gpt-4o-mini");
    expect(config.knowledge.embeddingModel).toBe("text-embedding-3-small");
  });

  it("takes Bedrock's model, region, endpoint and Titan embeddings", () => {
    const config = loadConfig({
      ...base,
      AWS_REGION: "eu-west-1",
      LLM_PROVIDER: "bedrock",
      LLM_MODEL: "eu.amazon.nova-lite-v1:0",
      BEDROCK_REGION: "eu-central-1",
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: "http://127.0.0.1:4599",
    });
    expect(config.providers).toEqual({
      llm: "bedrock",
      embeddings: "bedrock",
      bedrock: { region: "eu-central-1", endpoint: "http://127.0.0.1:4599" },
    });
    expect(config.llm.models).toEqual({
      default: "eu.amazon.nova-lite-v1:0",
      reason: "eu.amazon.nova-lite-v1:0",
      eval: "eu.amazon.nova-lite-v1:0",
    });
    expect(config.knowledge.embeddingModel).toBe("amazon.titan-embed-text-v2:0");
  });

  it("keeps embeddings on an OpenAI-compatible server when EMBEDDING_PROVIDER says so", () => {
    const config = loadConfig({
      ...base,
      LLM_PROVIDER: "bedrock",
      LLM_MODEL: "amazon.nova-lite-v1:0",
      EMBEDDING_PROVIDER: "openai",
    });
    expect(config.providers.embeddings).toBe("openai");
    expect(config.knowledge.embeddingModel).toBe("text-embedding-3-small");
  });

  it("refuses Bedrock without a model, and a provider it does not know", () => {
    expect(() => loadConfig({ ...base, LLM_PROVIDER: "bedrock" })).toThrow(
      /LLM_PROVIDER=bedrock needs LLM_MODEL, a Bedrock model id/,
    );
    expect(() => loadConfig({ ...base, LLM_PROVIDER: "anthropic" })).toThrow(
      /LLM_PROVIDER: must be openai, bedrock or ollama, not 'anthropic'/,
    );
  });
});

describe("whether the deployment has an LLM (STACKVM_LLM_CONFIGURED)", () => {
  it("is read as said, and unsaid when absent", () => {
    expect(loadConfig({ ...base, STACKVM_LLM_CONFIGURED: "true" }).llmConfigured).toBe(true);
    expect(loadConfig({ ...base, STACKVM_LLM_CONFIGURED: "false" }).llmConfigured).toBe(false);
    expect(loadConfig(base).llmConfigured).toBeNull();
    expect(() => loadConfig({ ...base, STACKVM_LLM_CONFIGURED: "yes" })).toThrow(
      /STACKVM_LLM_CONFIGURED/,
    );
  });

  it("makes a function without LLM settings refuse a goal at once, before any write", () => {
    const without = awsSystem({ ...base, STACKVM_LLM_CONFIGURED: "false" });
    expect(() => without.system.tasks.checks.requireLlm()).toThrow(
      /no LLM is configured.*sst secret/,
    );
    const withLlm = awsSystem({ ...base, STACKVM_LLM_CONFIGURED: "true" });
    expect(() => withLlm.system.tasks.checks.requireLlm()).not.toThrow();
  });
});

describe("whether the deployment can make embeddings (STACKVM_EMBEDDINGS_CONFIGURED)", () => {
  it("is read as said, and unsaid when absent", () => {
    const said = (value: string) =>
      loadConfig({ ...base, STACKVM_EMBEDDINGS_CONFIGURED: value }).embeddingsConfigured;
    expect(said("true")).toBe(true);
    expect(said("false")).toBe(false);
    expect(loadConfig(base).embeddingsConfigured).toBeNull();
    expect(() => said("no")).toThrow(/STACKVM_EMBEDDINGS_CONFIGURED/);
  });

  it("makes the API function refuse a document upload at once, naming the settings to set on AWS", () => {
    const without = awsSystem({ ...base, STACKVM_EMBEDDINGS_CONFIGURED: "false" });
    expect(() => without.system.knowledge.service.requireEmbeddings()).toThrow(
      /no embedding endpoint is configured.*npx sst secret set OpenaiApiKey, OpenaiBaseUrl or LlmProvider bedrock/,
    );
    const withEmbeddings = awsSystem({ ...base, STACKVM_EMBEDDINGS_CONFIGURED: "true" });
    expect(() => withEmbeddings.system.knowledge.service.requireEmbeddings()).not.toThrow();
    // A function the deployment says nothing to (an older stage) judges nothing: it accepts.
    expect(() => awsSystem(base).system.knowledge.service.requireEmbeddings()).not.toThrow();
  });
});

describe("the outbound guard's settings", () => {
  it("opens nothing private unless STACKVM_OPEN_PRIVATE_RANGES says so", () => {
    expect(loadConfig(base).openRanges).toEqual([]);
    expect(
      loadConfig({ ...base, STACKVM_OPEN_PRIVATE_RANGES: "127.0.0.1, 10.0.0.0/8" }).openRanges,
    ).toHaveLength(2);
  });

  it.each(["169.254.169.254", "0.0.0.0/0", "example.com"])(
    "stops the start on STACKVM_OPEN_PRIVATE_RANGES=%s, naming it",
    (value) => {
      expect(() => loadConfig({ ...base, STACKVM_OPEN_PRIVATE_RANGES: value })).toThrow(
        new RegExp(`STACKVM_OPEN_PRIVATE_RANGES: '${value.replace(/\./g, "\\.")}'`),
      );
    },
  );

  it("counts Lambda's runtime API among the stack's own ports", () => {
    expect(loadConfig({ ...base, AWS_LAMBDA_RUNTIME_API: "127.0.0.1:9001" }).ownPorts).toEqual([
      9001,
    ]);
    expect(loadConfig(base).ownPorts).toEqual([]);
  });
});

describe("the origins that may call the API from a browser", () => {
  it("lists none unless STACKVM_CORS_ORIGINS names them, each once", () => {
    expect(loadConfig(base).corsOrigins).toEqual([]);
    expect(
      loadConfig({
        ...base,
        STACKVM_CORS_ORIGINS:
          "https://app.example.com, http://localhost:5173,https://app.example.com",
      }).corsOrigins,
    ).toEqual(["https://app.example.com", "http://localhost:5173"]);
  });

  it.each([
    "*",
    "app.example.com",
    "https://app.example.com/",
    "https://app.example.com/path",
    "ftp://files.example.com",
    "https://app.example.com?x=1",
  ])("stops the start on STACKVM_CORS_ORIGINS=%s, saying how to write an origin", (value) => {
    expect(() => loadConfig({ ...base, STACKVM_CORS_ORIGINS: value })).toThrow(
      /STACKVM_CORS_ORIGINS: '.*' is not an origin: list origins as a browser sends them, scheme:\/\/host\[:port\]/,
    );
  });
});

describe("the web tools in the configuration", () => {
  it("has no search provider unless STACKVM_WEB_SEARCH_PROVIDER says one, and web_fetch's default bounds", () => {
    expect(loadConfig(base).web).toEqual({
      search: { provider: null, apiKey: null, baseUrl: null, priceUsd: 0 },
      fetch: { maxBytes: 2 << 20, timeoutMs: 15_000 },
    });
  });

  it("takes the provider, its key, base URL and price, else the provider's listed price", () => {
    const brave = loadConfig({
      ...base,
      STACKVM_WEB_SEARCH_PROVIDER: "brave",
      STACKVM_WEB_SEARCH_API_KEY: "k",
      STACKVM_WEB_FETCH_MAX_BYTES: "65536",
    });
    expect(brave.web.search).toEqual({
      provider: "brave",
      apiKey: "k",
      baseUrl: null,
      priceUsd: 0.005,
    });
    expect(brave.web.fetch).toEqual({ maxBytes: 65536, timeoutMs: 15_000 });
    const tavily = loadConfig({
      ...base,
      STACKVM_WEB_SEARCH_PROVIDER: "tavily",
      STACKVM_WEB_SEARCH_API_KEY: "k",
      STACKVM_WEB_SEARCH_BASE_URL: "http://127.0.0.1:9999",
      STACKVM_WEB_SEARCH_PRICE_USD: "0.01",
    });
    expect(tavily.web.search).toMatchObject({ baseUrl: "http://127.0.0.1:9999", priceUsd: 0.01 });
  });

  it("refuses a provider without its key, one it does not know, and bounds out of range, naming the setting", () => {
    expect(() => loadConfig({ ...base, STACKVM_WEB_SEARCH_PROVIDER: "tavily" })).toThrow(
      /STACKVM_WEB_SEARCH_PROVIDER=tavily needs STACKVM_WEB_SEARCH_API_KEY/,
    );
    expect(() =>
      loadConfig({
        ...base,
        STACKVM_WEB_SEARCH_PROVIDER: "google",
        STACKVM_WEB_SEARCH_API_KEY: "k",
      }),
    ).toThrow(/STACKVM_WEB_SEARCH_PROVIDER: must be tavily or brave, not 'google'/);
    expect(() => loadConfig({ ...base, STACKVM_WEB_SEARCH_BASE_URL: "not a url" })).toThrow(
      /STACKVM_WEB_SEARCH_BASE_URL/,
    );
    expect(() => loadConfig({ ...base, STACKVM_WEB_SEARCH_PRICE_USD: "-1" })).toThrow(
      /STACKVM_WEB_SEARCH_PRICE_USD/,
    );
    expect(() => loadConfig({ ...base, STACKVM_WEB_FETCH_MAX_BYTES: "1" })).toThrow(
      /STACKVM_WEB_FETCH_MAX_BYTES/,
    );
  });

  it("keeps the search key out of the LLM traces", async () => {
    const { systemOptions } = await import("./system-options");
    const config = loadConfig({
      ...base,
      STACKVM_WEB_SEARCH_PROVIDER: "brave",
      STACKVM_WEB_SEARCH_API_KEY: "search-secret",
    });
    const options = systemOptions(config, { log: () => {} } as never, false);
    expect(options.llmTraces?.secrets).toContain("search-secret");
    expect(options.web).toBe(config.web);
  });
});

describe("a model per role on its own server in the configuration", () => {
  const steps = {
    ...base,
    OPENAI_BASE_URL: "http://127.0.0.1:8080/v1",
    OPENAI_API_KEY: "steps-key",
  };

  it("answers with the reasoning roles on the steps' endpoint when no REASON_ endpoint is set", () => {
    expect(loadConfig(steps).reasonLlm).toBeNull();
  });

  it("answers with the reasoning endpoint, its own key and never the steps' key", () => {
    const config = loadConfig({
      ...steps,
      REASON_OPENAI_BASE_URL: "https://reasoner.example/v1",
      REASON_LLM_MODEL: "big",
    });
    expect(config.reasonLlm).toEqual({
      provider: "openai",
      setting: "openai",
      openai: { apiKey: null, baseURL: "https://reasoner.example/v1" },
    });
    expect(config.openai).toEqual({ apiKey: "steps-key", baseURL: "http://127.0.0.1:8080/v1" });
  });

  it("answers LLM_PROVIDER=ollama with OLLAMA_BASE_URL + /v1, as the original StackVM set it", () => {
    const config = loadConfig({
      ...base,
      LLM_PROVIDER: "ollama",
      OLLAMA_BASE_URL: "http://gpu-box:11434/",
      LLM_MODEL: "qwen2.5:7b",
    });
    expect(config.providers.llm).toBe("openai");
    expect(config.llmProviderSetting).toBe("ollama");
    expect(config.openai).toEqual({ apiKey: null, baseURL: "http://gpu-box:11434/v1" });
    expect(loadConfig({ ...base, LLM_PROVIDER: "ollama" }).openai.baseURL).toBe(
      "http://127.0.0.1:11434/v1",
    );
    expect(
      loadConfig({ ...steps, REASON_LLM_PROVIDER: "ollama", REASON_LLM_MODEL: "r1" }).reasonLlm,
    ).toMatchObject({ provider: "openai", openai: { baseURL: "http://127.0.0.1:11434/v1" } });
  });

  it("answers with a temperature per role, eval following reason following the steps'", () => {
    expect(loadConfig({ ...steps, LLM_TEMPERATURE: "0.7" }).llm.temperatures).toEqual({
      default: 0.7,
      reason: 0.7,
      eval: 0.7,
    });
    expect(
      loadConfig({ ...steps, LLM_TEMPERATURE: "1", REASON_LLM_TEMPERATURE: "0" }).llm.temperatures,
    ).toEqual({ default: 1, reason: 0, eval: 0 });
    expect(loadConfig(steps).llm.temperatures).toEqual({});
  });

  it.each([
    [{ REASON_LLM_TEMPERATURE: "3" }, "REASON_LLM_TEMPERATURE must be a number from 0 to 2"],
    [{ LLM_TEMPERATURE: "warm" }, "LLM_TEMPERATURE must be a number from 0 to 2"],
    [{ EVAL_LLM_TEMPERATURE: "-0.1" }, "EVAL_LLM_TEMPERATURE must be a number from 0 to 2"],
    [{ REASON_LLM_PROVIDER: "ollam" }, "REASON_LLM_PROVIDER: must be openai, bedrock or ollama"],
    [{ LLM_PROVIDER: "llama" }, "LLM_PROVIDER: must be openai, bedrock or ollama"],
    [{ REASON_OPENAI_BASE_URL: "not a url" }, "REASON_OPENAI_BASE_URL"],
    [
      { REASON_OPENAI_BASE_URL: "reasoner:8080" },
      "REASON_OPENAI_BASE_URL: must be an http:// or https:// URL",
    ],
    [
      { OLLAMA_BASE_URL: "file:///etc/passwd" },
      "OLLAMA_BASE_URL: must be an http:// or https:// URL",
    ],
    [{ OLLAMA_BASE_URL: "localhost" }, "OLLAMA_BASE_URL"],
    [{ REASON_LLM_PROVIDER: "openai" }, "set REASON_OPENAI_API_KEY, or REASON_OPENAI_BASE_URL"],
    [{ REASON_LLM_PROVIDER: "bedrock" }, "set REASON_LLM_MODEL"],
    [
      { LLM_PROVIDER: "ollama", OLLAMA_BASE_URL: "http://127.0.0.1:11434" },
      "OPENAI_BASE_URL is set too",
    ],
  ])("refuses %j, naming the setting", (bad, message) => {
    expect(() => loadConfig({ ...steps, ...bad })).toThrow(message);
  });
});
