/**
 * The properties the deployed app must have, as checks over its resource
 * graph. Each check returns the problems it found, in words that say what is
 * wrong; an empty list means the graph is right. The resource-graph test runs
 * them on the real graph, and on mutated graphs to prove each can fail.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ESBUILD_PLUGINS } from "../../infra/esbuild-plugins-file";
import { knowledgeArchitecture, knowledgeInstalls } from "../../infra/knowledge-installs";
import { sandboxScripts } from "../../infra/sandbox-scripts";
import { tableDefinition } from "../../packages/aws/src/table-definition";
import { bedrockCheck } from "./bedrock-check";
import {
  allows,
  byArn,
  type FunctionView,
  functions,
  type InfraGraph,
  ofType,
  type Resource,
  roleStatements,
  statementsOf,
} from "./infra-graph";

/** The entry file of each function; fixed by the issues that write them. */
export const handlers = {
  api: "packages/functions/src/api.handler",
  worker: "packages/functions/src/worker.handler",
  sandbox: "packages/functions/src/sandbox.handler",
  scheduler: "packages/functions/src/scheduler.handler",
  sweep: "packages/functions/src/sweep.handler",
  dlq: "packages/functions/src/dlq.handler",
  knowledge: "packages/functions/src/knowledge-function.handler",
} as const;

export type Role = keyof typeof handlers;

/** Which function reads which secret, and under which environment name. */
export const secretReaders: Record<string, { env: string; readers: Role[] }> = {
  LlmProvider: { env: "LLM_PROVIDER", readers: ["worker", "knowledge"] },
  OpenaiApiKey: { env: "OPENAI_API_KEY", readers: ["worker", "knowledge"] },
  OpenaiBaseUrl: { env: "OPENAI_BASE_URL", readers: ["worker", "knowledge"] },
  LlmModel: { env: "LLM_MODEL", readers: ["worker", "knowledge"] },
  ReasonLlmModel: { env: "REASON_LLM_MODEL", readers: ["worker", "knowledge"] },
  EvalLlmModel: { env: "EVAL_LLM_MODEL", readers: ["worker", "knowledge"] },
  // Only knowledge embeds (ingest, and the query of a search).
  EmbeddingModel: { env: "EMBEDDING_MODEL", readers: ["knowledge"] },
  BedrockRegion: { env: "BEDROCK_REGION", readers: ["worker", "knowledge"] },
  OllamaBaseUrl: { env: "OLLAMA_BASE_URL", readers: ["worker", "knowledge"] },
  LlmTemperature: { env: "LLM_TEMPERATURE", readers: ["worker", "knowledge"] },
  ReasonLlmTemperature: { env: "REASON_LLM_TEMPERATURE", readers: ["worker", "knowledge"] },
  EvalLlmTemperature: { env: "EVAL_LLM_TEMPERATURE", readers: ["worker", "knowledge"] },
  // Only the worker plans and evaluates; its key never reaches the knowledge function.
  ReasonLlmProvider: { env: "REASON_LLM_PROVIDER", readers: ["worker"] },
  ReasonOpenaiApiKey: { env: "REASON_OPENAI_API_KEY", readers: ["worker"] },
  ReasonOpenaiBaseUrl: { env: "REASON_OPENAI_BASE_URL", readers: ["worker"] },
  AdminKey: { env: "STACKVM_ADMIN_KEY", readers: ["api"] },
};

/** The environment each entry file reads (secrets are checked apart). */
export const requiredEnvironment: Record<Role, string[]> = {
  api: [
    "STACKVM_TABLE",
    "STACKVM_BUCKET",
    "STACKVM_QUEUE_URL",
    "STACKVM_SCHEDULE_GROUP",
    "STACKVM_SCHEDULER_ROLE_ARN",
    "STACKVM_SCHEDULER_FUNCTION_ARN",
    "STACKVM_SCHEDULE_DLQ_ARN",
    "STACKVM_LLM_TRACE_RETENTION_DAYS",
    "STACKVM_LLM_CONFIGURED",
    "STACKVM_EMBEDDINGS_CONFIGURED",
  ],
  worker: [
    "STACKVM_TABLE",
    "STACKVM_BUCKET",
    "STACKVM_QUEUE_URL",
    "STACKVM_SANDBOX_FUNCTION",
    "STACKVM_SANDBOX_DATA_FUNCTION",
    "STACKVM_KNOWLEDGE_FUNCTION",
    "STACKVM_LLM_TRACE_RETENTION_DAYS",
    "STACKVM_WAKE_GROUP",
    "STACKVM_SCHEDULER_ROLE_ARN",
    "STACKVM_SCHEDULER_FUNCTION_ARN",
    "STACKVM_SCHEDULE_DLQ_ARN",
  ],
  sandbox: [],
  scheduler: ["STACKVM_TABLE", "STACKVM_QUEUE_URL", "STACKVM_BUCKET", "STACKVM_LLM_CONFIGURED"],
  sweep: ["STACKVM_TABLE", "STACKVM_QUEUE_URL", "STACKVM_BUCKET", "STACKVM_STALLED_AFTER_SECONDS"],
  dlq: ["STACKVM_TABLE", "STACKVM_BUCKET", "STACKVM_QUEUE_URL", "STACKVM_DLQ_URL"],
  knowledge: ["STACKVM_TABLE", "STACKVM_BUCKET", "STACKVM_QUEUE_URL"],
};

/** The only policies the sandbox's role may hold: what Lambda needs to log and to join a VPC. */
const sandboxManagedPolicies = [
  "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
  "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
];

/** A named property check. */
export type Check = (graph: InfraGraph, root: string) => string[];

/** Finds the function of each role by its handler; problems when one is missing. */
function byRole(graph: InfraGraph): Partial<Record<Role, FunctionView>> {
  const views = functions(graph);
  const result: Partial<Record<Role, FunctionView>> = {};
  for (const [role, handler] of Object.entries(handlers) as [Role, string][]) {
    const view = views.find((v) => v.build.handler === handler);
    if (view) result[role] = view;
  }
  return result;
}

const trusts = (role: Resource | undefined) =>
  role === undefined ? [] : statementsOf(role.inputs.assumeRolePolicy);

function trustsOnly(role: Resource | undefined, service: string): boolean {
  const statements = trusts(role);
  return (
    statements.length > 0 &&
    statements.every(
      (s) =>
        s.effect === "Allow" &&
        s.actions.every((a) => a === "sts:AssumeRole") &&
        JSON.stringify(s.principal) === JSON.stringify({ Service: [service] }),
    )
  );
}

const queueByName = (graph: InfraGraph, logical: string) =>
  ofType(graph, "aws:sqs/queue:Queue").find((q) => q.name === logical);

const mappingsOf = (graph: InfraGraph, queue: Resource | undefined) =>
  ofType(graph, "aws:lambda/eventSourceMapping:EventSourceMapping").filter(
    (m) => queue !== undefined && m.inputs.eventSourceArn === queue.state.arn,
  );

/** Every check, by name. */
export const checks: Record<string, Check> = {
  bedrock: bedrockCheck,
  handlers(graph, root) {
    const problems: string[] = [];
    for (const [role, handler] of Object.entries(handlers)) {
      const count = graph.builds.filter((b) => b.handler === handler).length;
      if (count !== 1)
        problems.push(`the ${role} function (${handler}) is built ${count} times, not once`);
    }
    for (const build of graph.builds) {
      const base = build.handler.replace(/\.[^./]+$/, "");
      const found = [".ts", ".tsx", ".js", ".mjs"].some((ext) =>
        existsSync(join(root, base + ext)),
      );
      if (!found) {
        problems.push(
          `function ${build.functionID}: handler "${build.handler}" names ${base}.ts, which does not exist`,
        );
      }
    }
    return problems;
  },

  /**
   * Knowledge's packages (LanceDB, a native module esbuild cannot bundle, and
   * unpdf) are carried by the knowledge function alone, installed beside its
   * bundle by its postbuild hook for its own architecture; no function
   * installs them through `nodejs.install`, which would also bring LanceDB's
   * optional 300 MB embeddings runtime. What the hook installs is built and
   * checked by test/infra/function-packages.test.ts (the harness skips it).
   */
  knowledgeInstalls(graph) {
    const problems: string[] = [];
    for (const build of graph.builds) {
      // SST passes `install` as a list, or as a map of name to version.
      const raw: unknown = build.properties?.install;
      const installs = Array.isArray(raw)
        ? raw
        : raw && typeof raw === "object"
          ? Object.keys(raw)
          : [];
      for (const name of knowledgeInstalls.filter((n) => installs.includes(n))) {
        problems.push(
          `function ${build.functionID} (${build.handler}) installs ${name} with nodejs.install; only the knowledge function carries it, installed by its postbuild hook`,
        );
      }
    }
    return problems;
  },

  /**
   * The knowledge function: S3 on its two prefixes only (documents to read, the
   * index to read and write), the table, no queue, no Lambda, no KMS, no
   * schedules; a timeout below the worker's, which waits on it; its own
   * architecture.
   */
  knowledgeFunction(graph) {
    const { knowledge, worker } = byRole(graph);
    if (!knowledge || !worker) return ["the knowledge function or the worker is missing"];
    const problems: string[] = [];
    const bucket = ofType(graph, "aws:s3/bucket:Bucket")[0];
    const bucketArn = String(bucket?.state.arn);
    const allowedS3 = [`${bucketArn}/k/*`, `${bucketArn}/knowledge-index/*`, bucketArn];
    for (const s of knowledge.statements) {
      for (const action of s.actions) {
        const service = action.split(":")[0];
        if (service === "s3") {
          const outside = s.resources.filter((r) => !allowedS3.includes(r));
          if (outside.length > 0 || action === "s3:*") {
            problems.push(
              `the knowledge function may ${action} on ${s.resources.join(", ")}: only ${allowedS3.slice(0, 2).join(" and ")}`,
            );
          }
          if (s.resources.includes(bucketArn) && action !== "s3:ListBucket") {
            problems.push(`the knowledge function may ${action} on the whole bucket`);
          }
          if (
            action === "s3:ListBucket" &&
            !JSON.stringify(s.condition ?? {}).includes("knowledge-index/")
          ) {
            problems.push(
              "the knowledge function may list the whole bucket, not only its index prefix",
            );
          }
          if (s.resources.includes(`${bucketArn}/k/*`) && action !== "s3:GetObject") {
            problems.push(
              `the knowledge function may ${action} on the uploaded documents, which it only reads`,
            );
          }
        } else if (!["dynamodb", "bedrock", "ssm", "logs"].includes(service ?? "")) {
          problems.push(`the knowledge function may ${action}, which knowledge does not need`);
        }
      }
    }
    const timeout = Number(knowledge.lambda.inputs.timeout);
    const workerTimeout = Number(worker.lambda.inputs.timeout);
    if (!(timeout < workerTimeout)) {
      problems.push(
        `the knowledge function's timeout (${timeout} s) must be below the worker's (${workerTimeout} s), which waits on it`,
      );
    }
    const memory = Number(knowledge.lambda.inputs.memorySize);
    if (!(memory >= 1024 && memory <= 4096)) {
      problems.push(`the knowledge function's memory (${memory} MB) must be 1024 to 4096 MB`);
    }
    const architectures = (knowledge.lambda.inputs.architectures ?? []) as string[];
    if (JSON.stringify(architectures) !== JSON.stringify([knowledgeArchitecture])) {
      problems.push(
        `the knowledge function runs on ${architectures.join(", ")}, but its package is installed for ${knowledgeArchitecture}`,
      );
    }
    return problems;
  },

  /** Only the worker may invoke the knowledge function, and nothing has a resource policy on it. */
  knowledgeInvokers(graph) {
    const roles = byRole(graph);
    const arn = String(roles.knowledge?.lambda.state.arn);
    const problems = functions(graph)
      .filter(
        (f) =>
          f.build.functionID !== roles.worker?.build.functionID &&
          f.statements.some((s) => allows(s, "lambda:InvokeFunction", arn)),
      )
      .map(
        (f) =>
          `only the worker may invoke the knowledge function, but ${f.build.functionID} may too`,
      );
    if (!roles.worker?.statements.some((s) => allows(s, "lambda:InvokeFunction", arn))) {
      problems.push("the worker may not invoke the knowledge function");
    }
    if (
      roles.worker?.environment.STACKVM_KNOWLEDGE_FUNCTION !== roles.knowledge?.lambda.state.name
    ) {
      problems.push("the worker's STACKVM_KNOWLEDGE_FUNCTION does not name the knowledge function");
    }
    for (const permission of ofType(graph, "aws:lambda/permission:Permission")) {
      if (
        permission.inputs.function === roles.knowledge?.lambda.state.name ||
        permission.inputs.function === arn
      ) {
        problems.push(
          `the knowledge function must have no resource policy, but ${permission.name} lets ${permission.inputs.principal} invoke it`,
        );
      }
    }
    return problems;
  },

  /**
   * Every function is bundled with code splitting, so that the adapters its
   * cold start does not need (S3, EventBridge Scheduler, OpenAI, Lambda, the
   * console's assets) stay in chunks that load on first use.
   */
  codeSplitting(graph) {
    return graph.builds
      .filter((build) => build.properties?.splitting !== true)
      .map(
        (build) =>
          `function ${build.functionID} (${build.handler}) is bundled without code splitting (nodejs.splitting), so its cold start loads every lazily imported client`,
      );
  },

  /**
   * Every function is built with the project's esbuild plugins
   * (infra/esbuild-plugins.mjs: zod's translations in English alone), which
   * `npm run bundle` measures with.
   */
  esbuildPlugins(graph) {
    return graph.builds
      .filter((build) => build.properties?.plugins !== ESBUILD_PLUGINS)
      .map(
        (build) =>
          `function ${build.functionID} (${build.handler}) is bundled without ${ESBUILD_PLUGINS} (nodejs.plugins), so its cold start loads what the plugins leave out`,
      );
  },

  functionTrust(graph) {
    return functions(graph)
      .filter((f) => !trustsOnly(f.role, "lambda.amazonaws.com"))
      .map(
        (f) =>
          `function ${f.build.functionID}: its role must trust only lambda.amazonaws.com, but trusts ${JSON.stringify(trusts(f.role).map((s) => s.principal))}`,
      );
  },

  queue(graph) {
    const problems: string[] = [];
    const queue = queueByName(graph, "StepsQueue");
    const dlq = queueByName(graph, "StepsDlqQueue");
    if (!queue || !dlq) return ["the step queue (Steps) or its DLQ (StepsDlq) is missing"];
    if (queue.inputs.fifoQueue !== true) problems.push("the step queue must be FIFO");
    if (dlq.inputs.fifoQueue !== true) problems.push("the DLQ of a FIFO queue must be FIFO");
    const redrive = JSON.parse(String(queue.inputs.redrivePolicy ?? "{}")) as Record<
      string,
      unknown
    >;
    if (redrive.deadLetterTargetArn !== dlq.state.arn)
      problems.push("the step queue does not redrive to its DLQ");
    const receives = Number(redrive.maxReceiveCount);
    if (!(receives >= 1 && receives <= 10)) {
      problems.push(`the DLQ's receive count must be 1..10, is ${redrive.maxReceiveCount}`);
    }
    const worker = byRole(graph).worker;
    const visibility = Number(queue.inputs.visibilityTimeoutSeconds);
    const timeout = Number(worker?.lambda.inputs.timeout);
    if (!(visibility >= timeout)) {
      problems.push(
        `the queue's visibility timeout (${visibility} s) is below the worker's timeout (${timeout} s)`,
      );
    }
    return problems;
  },

  subscriptions(graph) {
    const problems: string[] = [];
    const roles = byRole(graph);
    for (const [queueName, role] of [
      ["StepsQueue", "worker"],
      ["StepsDlqQueue", "dlq"],
    ] as const) {
      const mappings = mappingsOf(graph, queueByName(graph, queueName));
      const fn = roles[role];
      if (mappings.length !== 1) {
        problems.push(`${queueName} must have exactly one subscriber, has ${mappings.length}`);
        continue;
      }
      const mapping = mappings[0]!;
      if (fn === undefined || mapping.inputs.functionName !== fn.lambda.state.arn) {
        problems.push(`${queueName}'s subscriber is not the ${role} function (${handlers[role]})`);
      }
      if (
        !((mapping.inputs.functionResponseTypes ?? []) as string[]).includes(
          "ReportBatchItemFailures",
        )
      ) {
        problems.push(`${queueName}'s subscriber does not report partial batch failures`);
      }
    }
    return problems;
  },

  sandboxLockdown(graph) {
    const sandbox = byRole(graph).sandbox;
    if (!sandbox) return ["the sandbox function is missing"];
    const problems: string[] = [];
    const links = Object.keys(sandbox.build.links ?? {});
    if (links.length > 0) problems.push(`the sandbox must link nothing, links ${links.join(", ")}`);
    if (sandbox.build.dev !== false) problems.push("the sandbox must have dev: false");
    const env = Object.keys(sandbox.environment);
    if (env.length > 0)
      problems.push(`the sandbox must have no environment, has ${env.join(", ")}`);
    if (sandbox.statements.length > 0) {
      problems.push(
        `the sandbox's role must have no policy, allows ${sandbox.statements.flatMap((s) => s.actions).join(", ")}`,
      );
    }
    problems.push(...roleAndNetworkProblems(graph, "the sandbox", sandbox.lambda, sandbox.role));
    return problems;
  },

  sandboxDataLockdown(graph) {
    const lambda = graph.resources.find(
      (r) => r.type === "aws:lambda/function:Function" && r.name === SANDBOX_DATA_FUNCTION,
    );
    if (!lambda) return [`the data sandbox function (${SANDBOX_DATA_FUNCTION}) is missing`];
    const role = byArn(graph, lambda.inputs.role);
    const problems: string[] = [];
    if (lambda.inputs.packageType !== "Image")
      problems.push(
        `the data sandbox must be an image function, is ${String(lambda.inputs.packageType)}`,
      );
    if (typeof lambda.inputs.imageUri !== "string" || !/@sha256:/.test(lambda.inputs.imageUri))
      problems.push("the data sandbox's image must be the built one, pinned by its digest");
    const architectures = asArray(lambda.inputs.architectures).map(String);
    if (JSON.stringify(architectures) !== JSON.stringify(["x86_64"]))
      problems.push(
        `the data sandbox must be x86_64 (Debian's packages and its seccomp filter), is ${architectures.join(", ") || "unset"}`,
      );
    const memory = Number(lambda.inputs.memorySize);
    if (!(memory >= LAMBDA_MEMORY_MB.min && memory <= LAMBDA_MEMORY_MB.max))
      problems.push(`the data sandbox's memory (${memory} MB) is outside Lambda's 128 to 10240 MB`);
    const timeout = Number(lambda.inputs.timeout);
    if (!(timeout > 0 && timeout <= LAMBDA_TIMEOUT_S))
      problems.push(`the data sandbox's timeout (${timeout} s) is outside Lambda's 900 s`);
    const env = (lambda.inputs.environment as { variables?: Record<string, string> } | undefined)
      ?.variables;
    if (env && Object.keys(env).length > 0)
      problems.push(
        `the data sandbox must have no environment, has ${Object.keys(env).join(", ")}`,
      );
    if (!trustsOnly(role, "lambda.amazonaws.com"))
      problems.push("the data sandbox's role must trust only Lambda");
    const statements = roleStatements(role);
    if (statements.length > 0)
      problems.push(
        `the data sandbox's role must have no policy, allows ${statements.flatMap((s) => s.actions).join(", ")}`,
      );
    problems.push(...roleAndNetworkProblems(graph, "the data sandbox", lambda, role));
    return problems;
  },

  sandboxScripts(graph) {
    const sandbox = byRole(graph).sandbox;
    const files = sandbox?.build.bundleFiles ?? [];
    const handler = files.find((f) => /(^|\/)sandbox\.(mjs|js|cjs)$/.test(f));
    if (!handler) return ["the sandbox's bundle has no sandbox.mjs"];
    const folder = handler.includes("/") ? handler.slice(0, handler.lastIndexOf("/") + 1) : "";
    return sandboxScripts
      .map((script) => folder + script.slice(script.lastIndexOf("/") + 1))
      .filter((expected) => !files.includes(expected))
      .map((missing) => `the sandbox's bundle lacks ${missing}, which the runner starts`);
  },

  sandboxInvokers(graph) {
    const roles = byRole(graph);
    const data = graph.resources.find(
      (r) => r.type === "aws:lambda/function:Function" && r.name === SANDBOX_DATA_FUNCTION,
    );
    return [
      ...invokedOnlyByWorker(graph, "the sandbox", roles.sandbox?.lambda, roles.worker),
      ...invokedOnlyByWorker(graph, "the data sandbox", data, roles.worker),
    ];
  },
  secrets(graph) {
    const problems: string[] = [];
    const roles = byRole(graph);
    for (const [secret, { env, readers }] of Object.entries(secretReaders)) {
      for (const [role, fn] of Object.entries(roles) as [Role, FunctionView][]) {
        const linked = secret in (fn.build.links ?? {});
        const inEnv = env in fn.environment;
        const reads = readers.includes(role);
        if (reads && !(linked && inEnv))
          problems.push(`the ${role} function must have ${secret} linked and as ${env}`);
        if (!reads && (linked || inEnv))
          problems.push(`the ${role} function must not get ${secret} (${env})`);
      }
    }
    return problems;
  },

  environment(graph) {
    const problems: string[] = [];
    for (const [role, fn] of Object.entries(byRole(graph)) as [Role, FunctionView][]) {
      for (const name of requiredEnvironment[role]) {
        if (!fn.environment[name]) problems.push(`the ${role} function lacks ${name}`);
      }
    }
    return problems;
  },

  schedulePermissions(graph) {
    const roles = byRole(graph);
    const { api, worker } = roles;
    if (!api || !worker || !roles.scheduler)
      return ["the api, the worker or the scheduler function is missing"];
    const problems: string[] = [];
    const groups = ofType(graph, "aws:scheduler/scheduleGroup:ScheduleGroup");
    const schedulesOf = (name: string | undefined) => {
      const group = groups.find((g) => g.state.name === name);
      return group && `${String(group.state.arn).replace(":schedule-group/", ":schedule/")}/*`;
    };
    const inGroup = schedulesOf(api.environment.STACKVM_SCHEDULE_GROUP);
    if (!inGroup) return ["STACKVM_SCHEDULE_GROUP names no schedule group of the app"];
    const inWakes = schedulesOf(worker.environment.STACKVM_WAKE_GROUP);
    if (!inWakes) return ["STACKVM_WAKE_GROUP names no schedule group of the app"];
    if (inWakes === inGroup)
      problems.push("the wakes must have a group of their own, apart from the tenants' schedules");
    const invokeRole = byArn(graph, api.environment.STACKVM_SCHEDULER_ROLE_ARN);
    if (!trustsOnly(invokeRole, "scheduler.amazonaws.com"))
      problems.push("the schedules' role must trust only scheduler.amazonaws.com");
    // The api manages the tenants' schedules; the worker only creates wakes in theirs.
    const mayManage = (fn: FunctionView, actions: string[], resources: string[]) =>
      fn.build.functionID === api.build.functionID
        ? resources.every((r) => r === inGroup)
        : fn.build.functionID === worker.build.functionID &&
          actions.every((a) => a === "scheduler:CreateSchedule") &&
          resources.every((r) => r === inWakes);
    const passers = [api.build.functionID, worker.build.functionID];
    for (const fn of functions(graph)) {
      for (const s of fn.statements) {
        if (
          s.actions.some((a) => a.startsWith("scheduler:")) &&
          !mayManage(fn, s.actions, s.resources)
        ) {
          problems.push(
            `${fn.build.functionID} may ${s.actions.join(", ")} on ${s.resources.join(", ")}; only the api in ${inGroup}, only the worker's CreateSchedule in ${inWakes}`,
          );
        }
        if (s.actions.some((a) => a === "iam:PassRole" || a === "iam:*" || a === "*")) {
          const scoped =
            passers.includes(fn.build.functionID) &&
            s.resources.every((r) => r === invokeRole?.state.arn) &&
            JSON.stringify(s.condition) ===
              JSON.stringify({
                StringEquals: { "iam:PassedToService": ["scheduler.amazonaws.com"] },
              });
          if (!scoped)
            problems.push(
              `${fn.build.functionID} may pass roles beyond the schedules' role to the Scheduler`,
            );
        }
      }
    }
    const canCreateWakes = worker.statements.some((s) =>
      allows(s, "scheduler:CreateSchedule", inWakes),
    );
    const canPass = worker.statements.some((s) =>
      allows(s, "iam:PassRole", String(invokeRole?.state.arn)),
    );
    if (!canCreateWakes || !canPass)
      problems.push(
        "the worker must create schedules in the wakes' group and pass the schedules' role (waits beyond 15 minutes)",
      );
    for (const key of [
      "STACKVM_SCHEDULER_ROLE_ARN",
      "STACKVM_SCHEDULER_FUNCTION_ARN",
      "STACKVM_SCHEDULE_DLQ_ARN",
    ]) {
      if (worker.environment[key] !== api.environment[key])
        problems.push(
          `the worker's ${key} is not the api's: wakes must invoke the scheduler function the same way`,
        );
    }
    if (api.environment.STACKVM_SCHEDULER_FUNCTION_ARN !== roles.scheduler.lambda.state.arn) {
      problems.push("STACKVM_SCHEDULER_FUNCTION_ARN is not the scheduler function");
    }
    const invokeStatements = invokeRole ? roleStatements(invokeRole) : [];
    const allowed = [
      { action: "lambda:InvokeFunction", arn: roles.scheduler.lambda.state.arn },
      { action: "sqs:SendMessage", arn: api.environment.STACKVM_SCHEDULE_DLQ_ARN },
    ];
    for (const s of invokeStatements) {
      const ok = allowed.some(
        (a) => s.actions.every((x) => x === a.action) && s.resources.every((r) => r === a.arn),
      );
      if (!ok)
        problems.push(
          `the schedules' role may do more than invoke the scheduler: ${s.actions.join(", ")} on ${s.resources.join(", ")}`,
        );
    }
    return problems;
  },

  sweep(graph) {
    const sweep = byRole(graph).sweep;
    const schedules = ofType(graph, "aws:scheduler/schedule:Schedule").filter(
      (s) => (s.inputs.target as { arn?: string } | undefined)?.arn === sweep?.lambda.state.arn,
    );
    if (!sweep || schedules.length !== 1)
      return ["exactly one schedule must invoke the sweep function"];
    const schedule = schedules[0]!;
    const problems: string[] = [];
    const every = /^rate\((\d+) minutes?\)$/.exec(String(schedule.inputs.scheduleExpression));
    if (!every || Number(every[1]) > 15) {
      problems.push(
        `the sweep must run every few minutes, runs on ${schedule.inputs.scheduleExpression}`,
      );
    }
    // Both from the step timeout: a branch is stalled after more than one step
    // timeout without a move, and is found within about two more.
    const stepTimeout = Number(byRole(graph).worker?.lambda.inputs.timeout);
    const stalledAfter = Number(sweep.environment.STACKVM_STALLED_AFTER_SECONDS);
    if (!(stalledAfter > stepTimeout && stalledAfter <= 3 * stepTimeout)) {
      problems.push(
        `the sweep's stall threshold (${stalledAfter} s) must be from one to three step timeouts (${stepTimeout} s)`,
      );
    }
    if (every && Number(every[1]) * 60 > 2 * stepTimeout) {
      problems.push(
        `the sweep must run at least every two step timeouts (${stepTimeout} s), runs on ${schedule.inputs.scheduleExpression}`,
      );
    }
    if (schedule.inputs.state !== "ENABLED") problems.push("the sweep's schedule is disabled");
    const role = byArn(graph, (schedule.inputs.target as { roleArn?: string }).roleArn);
    if (!trustsOnly(role, "scheduler.amazonaws.com"))
      problems.push("the sweep's role must trust only scheduler.amazonaws.com");
    return problems;
  },

  table(graph) {
    const tables = ofType(graph, "aws:dynamodb/table:Table");
    if (tables.length !== 1) return [`the app must have one table, has ${tables.length}`];
    const t = tables[0]!.inputs;
    const problems: string[] = [];
    const same = (what: string, actual: unknown, expected: unknown) => {
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        problems.push(
          `the table's ${what} is ${JSON.stringify(actual)}, tableDefinition says ${JSON.stringify(expected)}`,
        );
      }
    };
    same("hash key", t.hashKey, tableDefinition.hashKey);
    same("range key", t.rangeKey, tableDefinition.rangeKey);
    same("attributes", t.attributes, tableDefinition.attributes);
    same("billing mode", t.billingMode, tableDefinition.billingMode);
    same("TTL", t.ttl, { attributeName: tableDefinition.ttlAttribute, enabled: true });
    same(
      "indexes",
      t.globalSecondaryIndexes,
      tableDefinition.globalIndexes.map((i) => ({
        hashKey: i.hashKey,
        name: i.name,
        projectionType: "KEYS_ONLY",
        rangeKey: i.rangeKey,
      })),
    );
    return problems;
  },

  bucket(graph) {
    const problems: string[] = [];
    const rules = ofType(
      graph,
      "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    ).flatMap(
      (l) =>
        (l.inputs.rules ?? []) as {
          filter?: { prefix?: string };
          expiration?: { days?: number };
          status?: string;
        }[],
    );
    if (
      !rules.some(
        (r) =>
          r.filter?.prefix === "tmp/" && (r.expiration?.days ?? 0) > 0 && r.status === "Enabled",
      )
    ) {
      problems.push("the bucket must expire objects under tmp/");
    }
    // LLM traces go after the days the worker and the API are told (at least 1: with 0 none are written).
    const { api, worker } = byRole(graph);
    const told = [api, worker].map((fn) =>
      Number(fn?.environment.STACKVM_LLM_TRACE_RETENTION_DAYS),
    );
    const traces = rules.find((r) => r.filter?.prefix === "llm/" && r.status === "Enabled");
    if (!traces || told.some((days) => traces.expiration?.days !== Math.max(days, 1))) {
      problems.push(
        `the bucket must expire LLM traces under llm/ after STACKVM_LLM_TRACE_RETENTION_DAYS (${told.join(", ")}), expires them after ${traces?.expiration?.days ?? "never"}`,
      );
    }
    const block = ofType(graph, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")[0]
      ?.inputs;
    if (
      !block ||
      !["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"].every(
        (k) => block[k] === true,
      )
    ) {
      problems.push("the bucket must block public access");
    }
    return problems;
  },

  apiUrl(graph) {
    const api = byRole(graph).api;
    const url = ofType(graph, "aws:lambda/functionUrl:FunctionUrl").find(
      (u) => u.inputs.functionName === api?.lambda.state.name,
    );
    const problems: string[] = [];
    if (!url) return ["the api function has no URL"];
    if (url.inputs.invokeMode !== "RESPONSE_STREAM")
      problems.push("the api's URL must stream responses (SSE)");
    if (typeof graph.outputs.api !== "string" || !graph.outputs.api.startsWith("https://")) {
      problems.push(`the app must output the API's URL, outputs ${JSON.stringify(graph.outputs)}`);
    }
    return problems;
  },

  /**
   * Secret headers of tool sources: one KMS key, rotated; the api may make data
   * keys and open them, the worker only open them, on that key alone, each with
   * the key in STACKVM_TOOL_SECRETS_KMS_KEY; no other function may use KMS.
   */
  toolSecretsKey(graph) {
    const keys = ofType(graph, "aws:kms/key:Key");
    if (keys.length !== 1) return [`the app must have one KMS key, has ${keys.length}`];
    const arn = String(keys[0]!.state.arn);
    const problems: string[] = [];
    if (keys[0]!.inputs.enableKeyRotation !== true)
      problems.push("the tool secrets' KMS key must rotate (enableKeyRotation)");
    const uses: Partial<Record<Role, string[]>> = {
      api: ["kms:GenerateDataKey", "kms:Decrypt"],
      worker: ["kms:Decrypt"],
    };
    for (const [role, fn] of Object.entries(byRole(graph)) as [Role, FunctionView][]) {
      const allowed = uses[role] ?? [];
      for (const s of fn.statements.filter((x) => x.effect === "Allow")) {
        const kms = s.actions.filter((a) => a === "*" || a.startsWith("kms:"));
        const beyond = kms.filter((a) => !allowed.includes(a));
        if (beyond.length > 0)
          problems.push(
            `the ${role} function may ${beyond.join(", ")}; it may ${allowed.length > 0 ? `only ${allowed.join(", ")}` : "use no KMS key"}`,
          );
        if (kms.length > 0 && !s.resources.every((r) => r === arn))
          problems.push(
            `the ${role} function may use KMS on ${s.resources.join(", ")}, not only the tool secrets' key`,
          );
      }
      for (const action of allowed) {
        if (!fn.statements.some((s) => allows(s, action, arn)))
          problems.push(`the ${role} function may not ${action} with the tool secrets' key`);
      }
      const env = fn.environment.STACKVM_TOOL_SECRETS_KMS_KEY;
      if (allowed.length > 0 && env !== arn)
        problems.push(`the ${role} function's STACKVM_TOOL_SECRETS_KMS_KEY is not the key's ARN`);
      if (allowed.length === 0 && env !== undefined)
        problems.push(`the ${role} function must not get STACKVM_TOOL_SECRETS_KMS_KEY`);
    }
    return problems;
  },
};

/**
 * What keeps a sandbox function (the sandbox, and the data sandbox) from doing
 * anything but compute: a role with only Lambda's log and VPC policies, and
 * the VPC with no way out.
 */
function roleAndNetworkProblems(
  graph: InfraGraph,
  label: string,
  lambda: Resource,
  role: Resource | undefined,
): string[] {
  const problems: string[] = [];
  const managed = asArray(role?.inputs.managedPolicyArns).map(String);
  const extra = managed.filter((arn) => !sandboxManagedPolicies.includes(arn));
  if (extra.length > 0)
    problems.push(`${label}'s role must hold no other policy, holds ${extra.join(", ")}`);
  const roleArn = role?.state.arn;
  const roleName = role?.state.name;
  for (const attached of graph.resources.filter((r) =>
    ["aws:iam/rolePolicy:RolePolicy", "aws:iam/rolePolicyAttachment:RolePolicyAttachment"].includes(
      r.type,
    ),
  )) {
    if (attached.inputs.role === roleArn || attached.inputs.role === roleName) {
      problems.push(`${label}'s role gets a policy from ${attached.name}`);
    }
  }
  const vpc = lambda.inputs.vpcConfig as
    | { subnetIds?: string[]; securityGroupIds?: string[] }
    | undefined;
  const subnetIds = vpc?.subnetIds ?? [];
  const groupIds = vpc?.securityGroupIds ?? [];
  if (subnetIds.length === 0 || groupIds.length === 0) problems.push(`${label} must run in a VPC`);
  for (const id of groupIds) {
    const group = graph.resources.find(
      (r) => r.type === "aws:ec2/securityGroup:SecurityGroup" && r.id === id,
    );
    if (!group) problems.push(`${label}'s security group ${id} is not defined by the app`);
    else if (asArray(group.inputs.ingress).length + asArray(group.inputs.egress).length > 0) {
      problems.push(`${label}'s security group ${group.name} must have no rules`);
    }
  }
  const outward = graph.resources.filter((r) =>
    /^aws:ec2\/(internetGateway|natGateway|egressOnlyInternetGateway|route|vpcEndpoint|vpcPeeringConnection|transitGatewayVpcAttachment):/.test(
      r.type,
    ),
  );
  for (const r of outward)
    problems.push(`${label}'s network must have no way out, but ${r.name} (${r.type}) exists`);
  for (const id of subnetIds) {
    const subnet = graph.resources.find((r) => r.type === "aws:ec2/subnet:Subnet" && r.id === id);
    if (!subnet) problems.push(`${label}'s subnet ${id} is not defined by the app`);
    else if (subnet.inputs.mapPublicIpOnLaunch !== false)
      problems.push(`subnet ${subnet.name} must not map public IPs`);
  }
  return problems;
}

/** Only the worker's role may invoke this function, and it has no resource policy. */
function invokedOnlyByWorker(
  graph: InfraGraph,
  label: string,
  lambda: Resource | undefined,
  worker: FunctionView | undefined,
): string[] {
  if (!lambda) return [`${label} function is missing`];
  const arn = String(lambda.state.arn);
  const problems = functions(graph)
    .filter(
      (f) =>
        f.build.functionID !== worker?.build.functionID &&
        f.statements.some((s) => allows(s, "lambda:InvokeFunction", arn)),
    )
    .map((f) => `only the worker may invoke ${label}, but ${f.build.functionID} may too`);
  if (!worker?.statements.some((s) => allows(s, "lambda:InvokeFunction", arn))) {
    problems.push(`the worker may not invoke ${label}`);
  }
  for (const permission of ofType(graph, "aws:lambda/permission:Permission")) {
    if (permission.inputs.function === lambda?.state.name || permission.inputs.function === arn) {
      problems.push(
        `${label} must have no resource policy, but ${permission.name} lets ${permission.inputs.principal} invoke it`,
      );
    }
  }
  return problems;
}

/** The data sandbox's Lambda (an image function, not an SST build). */
export const SANDBOX_DATA_FUNCTION = "SandboxDataFunction";

/** Lambda's bounds for a function's memory (MB) and timeout (s). */
const LAMBDA_MEMORY_MB = { min: 128, max: 10_240 };
const LAMBDA_TIMEOUT_S = 900;

function asArray(value: unknown): unknown[] {
  return value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
}

/** Runs every check; the problems, each prefixed with its check's name. */
export function checkGraph(graph: InfraGraph, root: string): string[] {
  return Object.entries(checks).flatMap(([name, check]) =>
    check(graph, root).map((problem) => `${name}: ${problem}`),
  );
}
