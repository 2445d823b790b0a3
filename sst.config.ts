/// <reference path="./.sst/platform/config.d.ts" />

/**
 * StackVM on AWS. Each concern is one module under `infra/`, imported inside
 * `run()` because SST evaluates this file before its globals (`sst`, `aws`,
 * `$app`) exist. `function-defaults` comes first: its transforms apply only to
 * functions created after it. Deploy with `npx sst deploy --stage prod`
 * (docs/deploy.md).
 */
export default $config({
  app(input) {
    return {
      name: "stackvm",
      home: "aws",
      removal: input?.stage === "prod" ? "retain" : "remove",
      protect: input?.stage === "prod",
      providers: { aws: { version: "7.20.0" } },
    };
  },
  async run() {
    await import("./infra/function-defaults");
    await import("./infra/secrets");
    await import("./infra/storage");
    await import("./infra/queue");
    await import("./infra/sandbox");
    await import("./infra/sandbox-data");
    await import("./infra/knowledge");
    await import("./infra/worker");
    await import("./infra/schedules");
    const { api } = await import("./infra/api");
    return {
      api: api.url,
      console: $interpolate`${api.url}ui`,
    };
  },
});
