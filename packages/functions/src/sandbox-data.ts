/**
 * The entry of the data sandbox function (`SandboxData`, a container image:
 * infra/sandbox-data/Dockerfile). It is its own Lambda runtime and serves one
 * run per instance: it pre-starts the data engine's child (CPython with numpy,
 * pandas, matplotlib and openpyxl), takes one invocation from the Runtime API,
 * answers it, and exits, so that Lambda gives the next run a fresh instance.
 *
 * There is no bubblewrap on Lambda (no user namespaces), so the runner is in
 * `single-run` containment: the child installs its own seccomp filter (with
 * internet sockets refused, since the Runtime API listens on loopback), runs
 * under the same rlimits, and after the run every other process of the user is
 * killed and `/tmp` emptied before the answer is posted (ARCHITECTURE.md).
 */
import { SandboxRunner, sandboxConfigFromEnv } from "@stackvm/sandbox";
import { reportInitError, serveOneInvocation } from "./lambda-runtime-once";

const log = (level: string, message: string, fields?: Record<string, unknown>) =>
  console.error(JSON.stringify({ level, message, service: "stackvm-sandbox-data", ...fields }));

const api = process.env.AWS_LAMBDA_RUNTIME_API;
if (!api) {
  log("error", "AWS_LAMBDA_RUNTIME_API is not set: this entry runs only as a Lambda runtime");
  process.exit(1);
}
if (process.getuid?.() === 0) {
  // The sweep kills every other process of its user: never as root.
  const message =
    "the data sandbox runtime refuses to run as root: after each run it kills every other process of its own user";
  log("error", message);
  await reportInitError(api, new Error(message));
  process.exit(1);
}

let runner: SandboxRunner;
try {
  runner = new SandboxRunner(
    { ...sandboxConfigFromEnv(process.env), containment: "single-run" },
    { log },
  );
} catch (error) {
  log("error", `the data sandbox cannot start: ${(error as Error).message}`);
  await reportInitError(api, error);
  process.exit(1);
}
// The child boots (the libraries imported, matplotlib's fonts listed) while
// Lambda delivers the invocation.
void runner.warm().catch(() => {});

const result = await serveOneInvocation(api, (event, context) =>
  runner.handle(event, context.remainingMs),
);
if (result.status !== "answered") log("error", `the data sandbox's run ${result.status}`, result);
await runner.close();
// One run per instance: the next invocation gets a fresh one.
process.exit(result.status === "unreachable" ? 1 : 0);
