/**
 * Evaluates `sst.config.ts` and `infra/` offline, with SST's real components
 * (the TypeScript sources `sst install` writes to `.sst/platform`) under
 * Pulumi's runtime mocks, and collects every resource with its inputs.
 *
 * What the SST CLI would provide is stood in for here:
 * - the globals of `run()` (`sst`, `aws`, `$app`, `$interpolate`, ...);
 * - its RPC server, which `sst.aws.Function` asks to build each handler: the
 *   stand-in records the request and answers with an empty bundle (the bundle
 *   script builds the real ones);
 * - the provider calls (`getRegion`, `getPolicyDocument`, ...), answered with
 *   fixed values; `getPolicyDocument` renders the IAM JSON, so that policies can
 *   be asserted on.
 */

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { vi } from "vitest";
import {
  ACCOUNT,
  type FunctionBuild,
  type InfraGraph,
  PARTITION,
  REGION,
  type Resource,
} from "./infra-graph";

/** The project root: where `sst.config.ts` is. */
export const projectRoot = join(import.meta.dirname, "..", "..");

/** Values the stand-in passes for the secrets (`sst secret set`), all set by default. */
export const testSecrets: Record<string, string> = {
  OpenaiApiKey: "test-openai-key",
  OpenaiBaseUrl: "https://llm.test/v1",
  LlmModel: "test-model",
  ReasonLlmModel: "test-reason-model",
  EvalLlmModel: "test-eval-model",
  EmbeddingModel: "test-embedding-model",
  BedrockRegion: "us-west-2",
  OllamaBaseUrl: "http://ollama.test:11434",
  LlmTemperature: "0.7",
  ReasonLlmTemperature: "0.2",
  EvalLlmTemperature: "0",
  ReasonLlmProvider: "openai",
  ReasonOpenaiApiKey: "test-reason-key",
  ReasonOpenaiBaseUrl: "https://reason.test/v1",
  AdminKey: "test-admin-key-0123456789",
};

export interface EvaluateOptions {
  /** The stage, `$app.stage`. */
  stage?: string;
  /** Secret values that replace `testSecrets`' (an empty string is a secret set to ""). */
  secrets?: Record<string, string>;
  /**
   * Runs after the globals exist and before `sst.config.ts`'s `run()`: the
   * place to register a `$transform` that mutates the configuration.
   */
  before?: (globals: SstGlobals) => Promise<void> | void;
}

/** The globals SST gives `run()`, as far as a test uses them. */
export interface SstGlobals {
  sst: any;
  $transform: (component: unknown, cb: (args: any, opts: any, name: string) => void) => void;
  /** Imports a module of the project (e.g. `infra/storage.ts`) in the same module graph. */
  importProject: (relativePath: string) => Promise<Record<string, unknown>>;
}

/**
 * Evaluates the app once and returns its resource graph. Each call starts
 * from fresh modules, so calls do not see each other's resources.
 */
export async function evaluateInfra(options: EvaluateOptions = {}): Promise<InfraGraph> {
  const platform = join(projectRoot, ".sst", "platform");
  if (!existsSync(join(platform, "src", "components", "index.ts"))) {
    throw new Error(
      `SST's platform is missing at ${platform}: run \`npm run infra:prepare\` (it runs \`sst install\` from the npm registry).`,
    );
  }
  vi.resetModules();
  const work = await mkdtemp(join(tmpdir(), "stackvm-infra-"));
  const builds: FunctionBuild[] = [];
  const server = await startRpcStandIn(work, builds);
  const resources: Resource[] = [];
  const saved = new Map<string, string | undefined>();
  const setEnv = (name: string, value: string) => {
    if (!saved.has(name)) saved.set(name, process.env[name]);
    process.env[name] = value;
  };
  try {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no RPC port");
    setEnv("SST_SERVER", `http://127.0.0.1:${address.port}`);
    // The knowledge function's 200 MB install, which SST would zip on every
    // evaluation: test/infra/function-packages.test.ts builds and checks it.
    setEnv("STACKVM_SKIP_FUNCTION_INSTALLS", "1");
    for (const [name, value] of Object.entries({ ...testSecrets, ...options.secrets })) {
      setEnv(`SST_SECRET_${name}`, value);
    }

    const pulumi = await importFile(join(platform, "node_modules/@pulumi/pulumi/index.js"));
    const aws = await importFile(join(platform, "node_modules/@pulumi/aws/index.js"));
    await pulumi.runtime.setMocks(mocks(resources), "stackvm", options.stage ?? "test", false);

    const stage = options.stage ?? "test";
    // Some component modules read these while they load.
    Object.assign(globalThis, {
      $config: (config: unknown) => config,
      $app: {
        name: "stackvm",
        stage,
        removal: stage === "prod" ? "retain" : "remove",
        protect: stage === "prod",
        providers: { aws: { version: "7.20.0" } },
      },
      $dev: false,
      $cli: {
        command: "deploy",
        rpc: process.env.SST_SERVER,
        paths: { home: work, root: projectRoot, work, platform },
        state: { version: {} },
      },
    });
    const components = await importFile(join(platform, "src/components/index.ts"));
    const { $transform, $asset } = await importFile(join(platform, "src/components/component.ts"));
    const { Link } = await importFile(join(platform, "src/components/link.ts"));
    Object.assign(globalThis, {
      sst: components,
      aws,
      $util: pulumi,
      $output: pulumi.output,
      $apply: pulumi.apply,
      $resolve: pulumi.all,
      $interpolate: pulumi.interpolate,
      $concat: pulumi.concat,
      $jsonParse: pulumi.jsonParse,
      $jsonStringify: pulumi.jsonStringify,
      $transform,
      $asset,
      $linkable: Link.makeLinkable,
      $secrets: {},
    });

    const importProject = (path: string) => importFile(join(projectRoot, path));
    await options.before?.({ sst: components, $transform, importProject });
    const config = (await importProject("sst.config.ts")).default;
    const returned = await config.run();
    const outputs = await new Promise<Record<string, unknown>>((resolve) =>
      pulumi.output(returned).apply((value: Record<string, unknown>) => resolve(value)),
    );
    await pulumi.runtime.waitForRPCs();
    for (const build of builds) {
      const out = join(work, "bundles", build.functionID);
      build.bundleFiles = (await readdir(out, { recursive: true })).map((f) =>
        f.split(sep).join("/"),
      );
    }
    return { resources, builds, outputs };
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await new Promise((resolve) => server.close(resolve));
    await rm(work, { recursive: true, force: true });
  }
}

async function importFile(path: string): Promise<any> {
  return import(/* @vite-ignore */ path);
}

/** Pulumi mocks that record every resource and answer the provider calls SST makes. */
function mocks(resources: Resource[]) {
  return {
    newResource(args: { type: string; name: string; inputs: Record<string, unknown> }) {
      const inputs = unwrapSecrets(args.inputs) as Record<string, unknown>;
      const state = { ...inputs, ...fakeOutputs(args.type, args.name, inputs) };
      const id = `${args.name}-id`;
      resources.push({ type: args.type, name: args.name, id, inputs, state });
      return { id, state };
    },
    call(args: { token: string; inputs: Record<string, unknown> }) {
      switch (args.token) {
        case "aws:index/getRegion:getRegion":
          return {
            name: REGION,
            region: REGION,
            id: REGION,
            endpoint: `ec2.${REGION}.amazonaws.com`,
          };
        case "aws:index/getPartition:getPartition":
          return { partition: PARTITION, dnsSuffix: "amazonaws.com", id: PARTITION };
        case "aws:index/getCallerIdentity:getCallerIdentity":
          return { accountId: ACCOUNT, arn: `arn:aws:iam::${ACCOUNT}:user/test`, userId: "TEST" };
        case "aws:index/getAvailabilityZones:getAvailabilityZones":
          return { names: [`${REGION}a`, `${REGION}b`, `${REGION}c`], zoneIds: ["use1-az1"] };
        case "aws:ecr/getAuthorizationToken:getAuthorizationToken":
          // The data sandbox's image push (infra/sandbox-data.ts).
          return {
            authorizationToken: "dGVzdDp0ZXN0",
            userName: "AWS",
            password: "test-ecr-password",
            proxyEndpoint: `https://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com`,
            id: REGION,
          };
        case "aws:iam/getPolicyDocument:getPolicyDocument":
          // The data source echoes its statements, and none as undefined (SST
          // then adds no inline policy, which AWS would refuse if empty).
          return {
            ...args.inputs,
            statements: (args.inputs.statements as unknown[] | undefined)?.length
              ? args.inputs.statements
              : undefined,
            json: JSON.stringify(policyDocument(args.inputs)),
          };
        default:
          throw new Error(`the infra test's mocks do not answer ${args.token}: add it to mocks()`);
      }
    },
  };
}

/** The outputs AWS would add to a resource, enough for SST's ARN and URL parsers. */
function fakeOutputs(type: string, logical: string, inputs: Record<string, unknown>) {
  const named = inputs.name ?? inputs.bucket;
  const name = typeof named === "string" ? named : `${logical}-physical`;
  const at = `${REGION}:${ACCOUNT}`;
  switch (type) {
    case "aws:sqs/queue:Queue":
      return {
        name,
        arn: `arn:aws:sqs:${at}:${name}`,
        url: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`,
      };
    case "aws:lambda/function:Function":
      return {
        name,
        arn: `arn:aws:lambda:${at}:function:${name}`,
        invokeArn: `arn:aws:apigateway:${REGION}:lambda:path/functions/arn:aws:lambda:${at}:function:${name}/invocations`,
        qualifiedArn: `arn:aws:lambda:${at}:function:${name}:$LATEST`,
      };
    case "aws:lambda/functionUrl:FunctionUrl":
      return { functionUrl: `https://${logical.toLowerCase()}.lambda-url.${REGION}.on.aws/` };
    case "aws:iam/role:Role":
      return { name, arn: `arn:aws:iam::${ACCOUNT}:role/${name}` };
    case "aws:dynamodb/table:Table":
      return { name, arn: `arn:aws:dynamodb:${at}:table/${name}` };
    case "aws:s3/bucket:Bucket":
    case "aws:s3/bucketV2:BucketV2":
      return {
        bucket: name,
        arn: `arn:aws:s3:::${name}`,
        bucketDomainName: `${name}.s3.amazonaws.com`,
        bucketRegionalDomainName: `${name}.s3.${REGION}.amazonaws.com`,
      };
    case "aws:scheduler/scheduleGroup:ScheduleGroup":
      return { name, arn: `arn:aws:scheduler:${at}:schedule-group/${name}` };
    case "aws:scheduler/schedule:Schedule":
      return { name, arn: `arn:aws:scheduler:${at}:schedule/default/${name}` };
    case "aws:ecr/repository:Repository":
      return {
        name,
        arn: `arn:aws:ecr:${at}:repository/${name}`,
        registryId: ACCOUNT,
        repositoryUrl: `${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/${name}`,
      };
    case "docker-build:index:Image":
      // The built image as the provider reports it: its pushed tag at a digest.
      return {
        digest: `sha256:${"0".repeat(64)}`,
        ref: `${String((inputs.tags as string[] | undefined)?.[0] ?? logical)}@sha256:${"0".repeat(64)}`,
      };
    case "random:index/randomBytes:RandomBytes":
      return { base64: Buffer.from(logical).toString("base64"), hex: "00" };
    case "aws:cloudwatch/logGroup:LogGroup":
      return { name, arn: `arn:aws:logs:${at}:log-group:${name}` };
    default:
      return { arn: `arn:aws:${type.split(":")[1]?.split("/")[0] ?? "x"}:${at}:${logical}` };
  }
}

/** Pulumi's marker of a secret value in serialized properties. */
const secretSignature = "4dabf18193072939515e22adb298388d";

/** Replaces Pulumi's secret wrappers with their values, everywhere in a value. */
function unwrapSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  if (secretSignature in record) return unwrapSecrets(record.value);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, unwrapSecrets(v)]));
}

interface StatementInput {
  effect?: string;
  actions?: string[];
  resources?: string[];
  principals?: { type: string; identifiers: string[] }[];
  conditions?: { test: string; variable: string; values: string[] }[];
}

/** What `aws.iam.getPolicyDocument` returns, rendered from its statements. */
function policyDocument(inputs: Record<string, unknown>) {
  const statements = (inputs.statements ?? []) as StatementInput[];
  return {
    Version: "2012-10-17",
    Statement: statements.map((s) => ({
      Effect: s.effect ?? "Allow",
      ...(s.actions ? { Action: s.actions } : {}),
      ...(s.resources ? { Resource: s.resources } : {}),
      ...(s.principals
        ? {
            Principal: Object.fromEntries(s.principals.map((p) => [p.type, p.identifiers])),
          }
        : {}),
      ...(s.conditions?.length
        ? {
            Condition: Object.fromEntries(
              s.conditions.map((c) => [c.test, { [c.variable]: c.values }]),
            ),
          }
        : {}),
    })),
  };
}

/**
 * Stands in for the SST CLI's RPC server. `Runtime.Build` is recorded and
 * answered with a one-file bundle, so that SST can zip it.
 */
async function startRpcStandIn(work: string, builds: FunctionBuild[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", async () => {
      const { method, params } = JSON.parse(body) as { method: string; params: [unknown] };
      const answer = (result: unknown, error?: string) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ result, error: error ?? null }));
      };
      if (method === "Provider.Aws.Bootstrap") {
        answer({
          asset: "sst-asset-test",
          assetEcrRegistryId: ACCOUNT,
          assetEcrUrl: "",
          state: "",
        });
        return;
      }
      if (method === "Runtime.Build") {
        const input = params[0] as FunctionBuild;
        builds.push(input);
        const out = join(work, "bundles", input.functionID);
        const file = join(out, `${input.handler.replace(/\.[^.]+$/, "")}.mjs`);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, "export const handler = async () => {};\n");
        answer({ handler: input.handler, out, errors: [], sourcemaps: [] });
        return;
      }
      answer(null, `rpc: can't find method ${method}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
