/**
 * The app's AWS resources, evaluated offline with SST's real components under
 * Pulumi's mocks (see sst-harness.ts), checked against the properties the
 * design asks for (check-graph.ts). Each check is also shown to fail: on a
 * graph mutated by hand, and for two mistakes, on the graph SST makes from a
 * mutated configuration.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { checkGraph, checks, handlers, SANDBOX_DATA_FUNCTION } from "./check-graph";
import { functions, type InfraGraph, named, ofType, type Resource } from "./infra-graph";
import { evaluateInfra, projectRoot } from "./sst-harness";

let graph: InfraGraph;

beforeAll(async () => {
  graph = await evaluateInfra();
});

/** A copy of the graph, changed by `mutate`. */
function mutated(mutate: (g: InfraGraph) => void): InfraGraph {
  const copy = structuredClone(graph);
  mutate(copy);
  return copy;
}

const dataFunction = (g: InfraGraph) =>
  named(g, "aws:lambda/function:Function", SANDBOX_DATA_FUNCTION) as Resource;

const fnOf = (g: InfraGraph, handler: string) => {
  const view = functions(g).find((f) => f.build.handler === handler);
  if (!view) throw new Error(`no function with handler ${handler}`);
  return view;
};

const mustFind = (resource: Resource | undefined): Resource => {
  if (!resource) throw new Error("resource not in the graph");
  return resource;
};

describe("the app's resource graph", () => {
  it.each(Object.keys(checks))("passes the %s check", (name) => {
    expect(checks[name]?.(graph, projectRoot)).toEqual([]);
  });

  it("builds the seven functions, each once, from their entry files", () => {
    expect(graph.builds.map((b) => b.handler).sort()).toEqual(Object.values(handlers).sort());
  });

  it("gives the sandbox a role that trusts only Lambda and holds only Lambda's service policies", () => {
    const sandbox = fnOf(graph, handlers.sandbox);
    expect(JSON.parse(String(sandbox.role?.inputs.assumeRolePolicy))).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Principal: { Service: "lambda.amazonaws.com" },
          Action: "sts:AssumeRole",
        },
      ],
    });
    expect(sandbox.statements).toEqual([]);
    expect(sandbox.lambda.inputs.environment).toBeUndefined();
  });

  it("strips SST_KEY from the sandbox only", () => {
    const withKey = functions(graph).filter((f) => "SST_KEY" in f.environment);
    expect(withKey.map((f) => f.build.handler).sort()).toEqual(
      Object.values(handlers)
        .filter((h) => h !== handlers.sandbox)
        .sort(),
    );
  });

  it("outputs the API's URL and the console under it", () => {
    expect(graph.outputs.api).toMatch(/^https:\/\/.+\.lambda-url\./);
    expect(graph.outputs.console).toBe(`${graph.outputs.api}ui`);
  });
});

describe("checkGraph on a mutated graph", () => {
  const bucketArn = () => String(mustFind(ofType(graph, "aws:s3/bucket:Bucket")[0]).state.arn);

  it.each<[string, string, (g: InfraGraph) => void]>([
    [
      "the worker installing unpdf with nodejs.install",
      "knowledgeInstalls",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        worker.build.properties = { ...worker.build.properties, install: ["unpdf"] };
      },
    ],
    [
      "the knowledge function allowed to write the whole bucket",
      "knowledgeFunction",
      (g) => {
        const knowledge = fnOf(g, handlers.knowledge);
        knowledge.role!.inputs.inlinePolicies = [
          {
            name: "inline",
            policy: JSON.stringify({
              Statement: [
                { Effect: "Allow", Action: ["s3:PutObject"], Resource: [`${bucketArn()}/*`] },
              ],
            }),
          },
        ];
      },
    ],
    [
      "the knowledge function allowed to send to the queue",
      "knowledgeFunction",
      (g) => {
        const knowledge = fnOf(g, handlers.knowledge);
        knowledge.role!.inputs.inlinePolicies = [
          {
            name: "inline",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: ["sqs:SendMessage"], Resource: ["*"] }],
            }),
          },
        ];
      },
    ],
    [
      "the knowledge function waiting longer than the worker",
      "knowledgeFunction",
      (g) => {
        fnOf(g, handlers.knowledge).lambda.inputs.timeout = 900;
      },
    ],
    [
      "the knowledge function on another architecture than its package",
      "knowledgeFunction",
      (g) => {
        const knowledge = fnOf(g, handlers.knowledge);
        knowledge.lambda.inputs.architectures = [
          knowledge.lambda.inputs.architectures?.toString() === "arm64" ? "x86_64" : "arm64",
        ];
      },
    ],
    [
      "the API allowed to invoke the knowledge function",
      "knowledgeInvokers",
      (g) => {
        const api = fnOf(g, handlers.api);
        const arn = String(fnOf(g, handlers.knowledge).lambda.state.arn);
        api.role!.inputs.inlinePolicies = [
          ...((api.role!.inputs.inlinePolicies ?? []) as unknown[]),
          {
            name: "extra",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: ["lambda:InvokeFunction"], Resource: [arn] }],
            }),
          },
        ];
      },
    ],
    [
      "the worker not allowed to invoke the knowledge function",
      "knowledgeInvokers",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        const arn = String(fnOf(g, handlers.knowledge).lambda.state.arn);
        worker.role!.inputs.inlinePolicies = (
          (worker.role!.inputs.inlinePolicies ?? []) as { policy?: unknown }[]
        ).map((p) => ({
          ...p,
          policy: String(p.policy).replaceAll(arn, "arn:aws:lambda:::other"),
        }));
      },
    ],
    [
      "the worker bundled without code splitting",
      "codeSplitting",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        worker.build.properties = { ...worker.build.properties, splitting: false };
      },
    ],
    [
      "the api bundled without the project's esbuild plugins",
      "esbuildPlugins",
      (g) => {
        const api = fnOf(g, handlers.api);
        const { plugins: _, ...rest } = api.build.properties ?? {};
        api.build.properties = rest;
      },
    ],
    [
      "the bucket linked to the sandbox",
      "sandboxLockdown",
      (g) => {
        const sandbox = fnOf(g, handlers.sandbox);
        sandbox.build.links = { Blobs: { name: "blobs" } };
        sandbox.role!.inputs.inlinePolicies = [
          {
            name: "inline",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: ["s3:*"], Resource: [bucketArn()] }],
            }),
          },
        ];
      },
    ],
    [
      "LLM traces kept longer than the functions are told",
      "bucket",
      (g) => {
        const lifecycle = ofType(
          g,
          "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        )[0]!;
        const rules = lifecycle.inputs.rules as {
          filter?: { prefix?: string };
          expiration?: { days?: number };
        }[];
        rules.find((r) => r.filter?.prefix === "llm/")!.expiration = { days: 400 };
      },
    ],
    [
      "SST_KEY left in the sandbox",
      "sandboxLockdown",
      (g) => {
        fnOf(g, handlers.sandbox).lambda.inputs.environment = { variables: { SST_KEY: "k" } };
      },
    ],
    [
      "an egress rule on the sandbox's security group",
      "sandboxLockdown",
      (g) => {
        mustFind(
          named(g, "aws:ec2/securityGroup:SecurityGroup", "SandboxSecurityGroup"),
        ).inputs.egress = [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["0.0.0.0/0"] }];
      },
    ],
    [
      "an internet gateway",
      "sandboxLockdown",
      (g) => {
        g.resources.push({
          type: "aws:ec2/internetGateway:InternetGateway",
          name: "SandboxIgw",
          id: "igw",
          inputs: {},
          state: {},
        });
      },
    ],
    [
      "an extra managed policy on the sandbox's role",
      "sandboxLockdown",
      (g) => {
        const role = fnOf(g, handlers.sandbox).role!;
        role.inputs.managedPolicyArns = [
          ...(role.inputs.managedPolicyArns as string[]),
          "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess",
        ];
      },
    ],
    [
      "the sandbox run by sst dev",
      "sandboxLockdown",
      (g) => {
        fnOf(g, handlers.sandbox).build.dev = true;
      },
    ],
    [
      "the runner's QuickJS worker left out of the sandbox's bundle",
      "sandboxScripts",
      (g) => {
        const build = fnOf(g, handlers.sandbox).build;
        build.bundleFiles = build.bundleFiles?.filter((f) => !f.endsWith("quickjs-worker.ts"));
      },
    ],
    [
      "the data sandbox built for arm64",
      "sandboxDataLockdown",
      (g) => {
        dataFunction(g).inputs.architectures = ["arm64"];
      },
    ],
    [
      "the data sandbox as a zip function",
      "sandboxDataLockdown",
      (g) => {
        dataFunction(g).inputs.packageType = "Zip";
      },
    ],
    [
      "an environment on the data sandbox",
      "sandboxDataLockdown",
      (g) => {
        dataFunction(g).inputs.environment = { variables: { SST_KEY: "k" } };
      },
    ],
    [
      "the data sandbox's role allowed to read the bucket",
      "sandboxDataLockdown",
      (g) => {
        const role = g.resources.find((r) => r.state.arn === dataFunction(g).inputs.role)!;
        role.inputs.inlinePolicies = [
          {
            name: "inline",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: ["s3:GetObject"], Resource: ["*"] }],
            }),
          },
        ];
      },
    ],
    [
      "the data sandbox outside the VPC",
      "sandboxDataLockdown",
      (g) => {
        delete dataFunction(g).inputs.vpcConfig;
      },
    ],
    [
      "a resource policy that lets anyone invoke the data sandbox",
      "sandboxInvokers",
      (g) => {
        g.resources.push({
          type: "aws:lambda/permission:Permission",
          name: "SandboxDataPublic",
          id: "p",
          inputs: { function: dataFunction(g).state.name, principal: "*" },
          state: {},
        });
      },
    ],
    [
      "the data sandbox not invocable by the worker",
      "sandboxInvokers",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        const arn = String(dataFunction(g).state.arn);
        worker.role!.inputs.inlinePolicies = (
          worker.role!.inputs.inlinePolicies as { name: string; policy: string }[]
        ).map((p) => ({ ...p, policy: p.policy.replaceAll(arn, `${arn}-other`) }));
      },
    ],
    [
      "a resource policy that lets anyone invoke the sandbox",
      "sandboxInvokers",
      (g) => {
        g.resources.push({
          type: "aws:lambda/permission:Permission",
          name: "SandboxPublic",
          id: "p",
          inputs: { function: fnOf(g, handlers.sandbox).lambda.state.name, principal: "*" },
          state: {},
        });
      },
    ],
    [
      "the api allowed to invoke every function",
      "sandboxInvokers",
      (g) => {
        const role = fnOf(g, handlers.api).role!;
        role.inputs.inlinePolicies = [
          {
            name: "wide",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: "lambda:*", Resource: "*" }],
            }),
          },
        ];
      },
    ],
    [
      "a handler path that does not exist",
      "handlers",
      (g) => {
        fnOf(g, handlers.scheduler).build.handler = "packages/functions/src/no-such-file.handler";
      },
    ],
    [
      "a role that also trusts the account",
      "functionTrust",
      (g) => {
        fnOf(g, handlers.worker).role!.inputs.assumeRolePolicy = JSON.stringify({
          Statement: [
            {
              Effect: "Allow",
              Principal: { Service: "lambda.amazonaws.com", AWS: "arn:aws:iam::123456789012:root" },
              Action: "sts:AssumeRole",
            },
          ],
        });
      },
    ],
    [
      "a visibility timeout below the worker's timeout",
      "queue",
      (g) => {
        mustFind(named(g, "aws:sqs/queue:Queue", "StepsQueue")).inputs.visibilityTimeoutSeconds =
          30;
      },
    ],
    [
      "a sweep that waits a fixed 20 minutes for a stalled branch",
      "sweep",
      (g) => {
        fnOf(g, handlers.sweep).environment.STACKVM_STALLED_AFTER_SECONDS = "1200";
      },
    ],
    [
      "a queue without a DLQ",
      "queue",
      (g) => {
        delete mustFind(named(g, "aws:sqs/queue:Queue", "StepsQueue")).inputs.redrivePolicy;
      },
    ],
    [
      "a worker without partial batch responses",
      "subscriptions",
      (g) => {
        const mapping = ofType(g, "aws:lambda/eventSourceMapping:EventSourceMapping").find(
          (m) => m.inputs.functionName === fnOf(g, handlers.worker).lambda.state.arn,
        );
        mustFind(mapping).inputs.functionResponseTypes = [];
      },
    ],
    [
      "the admin key given to the worker",
      "secrets",
      (g) => {
        fnOf(g, handlers.worker).environment.STACKVM_ADMIN_KEY = "k";
      },
    ],
    [
      "the OpenAI key not linked to the worker",
      "secrets",
      (g) => {
        delete fnOf(g, handlers.worker).build.links.OpenaiApiKey;
      },
    ],
    [
      "schedule management beyond the group",
      "schedulePermissions",
      (g) => {
        fnOf(g, handlers.api).role!.inputs.inlinePolicies = [
          {
            name: "wide",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: "scheduler:*", Resource: "*" }],
            }),
          },
        ];
      },
    ],
    [
      "the worker allowed to write the tenants' schedules",
      "schedulePermissions",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        const group = String(fnOf(g, handlers.api).environment.STACKVM_SCHEDULE_GROUP);
        worker.role!.inputs.inlinePolicies = [
          {
            name: "tenants",
            policy: JSON.stringify({
              Statement: [
                {
                  Effect: "Allow",
                  Action: "scheduler:CreateSchedule",
                  Resource: `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/*`,
                },
              ],
            }),
          },
        ];
      },
    ],
    [
      "a worker that may not create wakes",
      "schedulePermissions",
      (g) => {
        fnOf(g, handlers.worker).role!.inputs.inlinePolicies = [];
      },
    ],
    [
      "the wakes in the tenants' schedule group",
      "schedulePermissions",
      (g) => {
        const worker = fnOf(g, handlers.worker);
        worker.environment.STACKVM_WAKE_GROUP = fnOf(g, handlers.api).environment
          .STACKVM_SCHEDULE_GROUP as string;
      },
    ],
    [
      "a worker without its wake group",
      "environment",
      (g) => {
        delete fnOf(g, handlers.worker).environment.STACKVM_WAKE_GROUP;
      },
    ],
    [
      "a sweep every hour",
      "sweep",
      (g) => {
        mustFind(
          named(g, "aws:scheduler/schedule:Schedule", "SweepSchedule"),
        ).inputs.scheduleExpression = "rate(60 minutes)";
      },
    ],
    [
      "a table without TTL",
      "table",
      (g) => {
        delete mustFind(ofType(g, "aws:dynamodb/table:Table")[0]).inputs.ttl;
      },
    ],
    [
      "an api URL that buffers",
      "apiUrl",
      (g) => {
        mustFind(ofType(g, "aws:lambda/functionUrl:FunctionUrl")[0]).inputs.invokeMode = "BUFFERED";
      },
    ],
    [
      "the dlq allowed to open tool secrets",
      "toolSecretsKey",
      (g) => {
        const key = String(mustFind(ofType(g, "aws:kms/key:Key")[0]).state.arn);
        fnOf(g, handlers.dlq).role!.inputs.inlinePolicies = [
          {
            name: "kms",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: "kms:Decrypt", Resource: key }],
            }),
          },
        ];
      },
    ],
    [
      "the worker allowed every KMS action on every key",
      "toolSecretsKey",
      (g) => {
        const role = fnOf(g, handlers.worker).role!;
        role.inputs.inlinePolicies = [
          ...((role.inputs.inlinePolicies as unknown[]) ?? []),
          {
            name: "kms",
            policy: JSON.stringify({
              Statement: [{ Effect: "Allow", Action: "kms:*", Resource: "*" }],
            }),
          },
        ];
      },
    ],
    [
      "the api without the key's ARN",
      "toolSecretsKey",
      (g) => {
        delete fnOf(g, handlers.api).environment.STACKVM_TOOL_SECRETS_KMS_KEY;
      },
    ],
    [
      "a tool secrets key that does not rotate",
      "toolSecretsKey",
      (g) => {
        mustFind(ofType(g, "aws:kms/key:Key")[0]).inputs.enableKeyRotation = false;
      },
    ],
  ])("fails on %s (%s)", (_what, check, mutate) => {
    const broken = mutated(mutate);
    expect(checks[check]?.(broken, projectRoot)).not.toEqual([]);
    expect(checkGraph(broken, projectRoot).some((p) => p.startsWith(`${check}: `))).toBe(true);
  });
});

describe("the worker's environment with the optional secrets left empty", () => {
  it("leaves the empty ones out, so that the entry file's validation sees them unset", async () => {
    const empty = await evaluateInfra({
      secrets: { OpenaiBaseUrl: "", ReasonLlmModel: "", EvalLlmModel: "" },
    });
    const worker = fnOf(empty, handlers.worker);
    expect(Object.keys(worker.environment)).not.toContain("OPENAI_BASE_URL");
    expect(Object.keys(worker.environment)).not.toContain("REASON_LLM_MODEL");
    expect(worker.environment.OPENAI_API_KEY).toBe("test-openai-key");
    expect(worker.environment.LLM_MODEL).toBe("test-model");
  });
});

describe("checkGraph on the graph SST makes from a mutated configuration", () => {
  it("fails the sandbox lockdown when the bucket is linked to the sandbox", async () => {
    const linked = await evaluateInfra({
      async before({ sst, $transform, importProject }) {
        const { bucket } = await importProject("infra/storage.ts");
        $transform(sst.aws.Function, (args, _opts, name) => {
          if (name === "Sandbox") args.link = [bucket];
        });
      },
    });
    const problems = checks.sandboxLockdown?.(linked, projectRoot) ?? [];
    expect(problems).toContain("the sandbox must link nothing, links Blobs");
    expect(problems.some((p) => p.includes("s3:*"))).toBe(true);
  });

  it("fails the handlers check when a handler path does not exist", async () => {
    const missing = await evaluateInfra({
      before({ sst, $transform }) {
        $transform(sst.aws.Function, (args, _opts, name) => {
          if (name === "Scheduler") args.handler = "packages/functions/src/no-such-file.handler";
        });
      },
    });
    expect(checks.handlers?.(missing, projectRoot)).toContain(
      'function Scheduler: handler "packages/functions/src/no-such-file.handler" names packages/functions/src/no-such-file.ts, which does not exist',
    );
  });
});
