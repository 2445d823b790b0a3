/**
 * What every function of the app gets, set once with `$transform` so that no
 * function (including the ones SST makes inside `Queue.subscribe` and `CronV2`)
 * can miss it. Import this module before any other infra module: a transform
 * applies only to components created after it.
 *
 * - The role trusts only Lambda. SST 4.17.1 writes
 *   `assumeRolePolicy: !dev ? lambdaOnly : lambdaAndAccount` where `dev` is an
 *   `Output`, so `!dev` is always false and every role also trusts
 *   `arn:aws:iam::ACCOUNT:root`: anyone in the account allowed `sts:AssumeRole`
 *   could act as any function. Under `sst dev` the account trust is what lets the
 *   CLI run a live function on a laptop with that function's permissions, so it is
 *   kept there, and only there, for functions that run live (`dev` not `false`).
 * - Graviton (`arm64`): 20% cheaper per GB-second than x86, and nothing in these
 *   bundles is native code (QuickJS and Pyodide are WebAssembly). The one
 *   exception sets its own: the knowledge function, whose LanceDB has a native
 *   module (infra/knowledge-installs.ts says why it is x86_64).
 * - Code splitting (`nodejs.splitting`): each dynamic `import()` becomes a chunk
 *   loaded on first use, so a cold start does not parse the clients that most
 *   invocations never call (S3, EventBridge Scheduler, OpenAI, Lambda, the
 *   console's assets; see packages/core/src/lazy-port.ts). Measured by
 *   `npm run bundle`: the api's cold import about 40% shorter.
 * - esbuild plugins (`nodejs.plugins`, infra/esbuild-plugins.mjs): zod's error
 *   messages in English only, 260 KB less for the api to load at each cold start.
 */
import { ESBUILD_PLUGINS } from "./esbuild-plugins-file";
import { knowledgeInstalls } from "./knowledge-installs";

/** The trust policy of every function's role outside `sst dev`: Lambda and nothing else. */
export const lambdaOnlyTrust = JSON.stringify({
  Version: "2012-10-17",
  Statement: [
    {
      Effect: "Allow",
      Principal: { Service: "lambda.amazonaws.com" },
      Action: "sts:AssumeRole",
    },
  ],
});

$transform(sst.aws.Function, (args) => {
  const runsLive = $dev && args.dev !== false;
  const own = args.transform?.role;
  args.transform = {
    ...args.transform,
    role: (role, opts, name) => {
      if (typeof own === "function") own(role, opts, name);
      else if (own) Object.assign(role, own);
      if (!runsLive) role.assumeRolePolicy = lambdaOnlyTrust;
      return undefined;
    },
  };
  // Knowledge's native and heavy packages stay out of every bundle; the knowledge function installs them.
  args.nodejs = $output(args.nodejs ?? {}).apply((nodejs) => ({
    splitting: true,
    plugins: ESBUILD_PLUGINS,
    ...nodejs,
    esbuild: {
      ...nodejs.esbuild,
      external: [...(nodejs.esbuild?.external ?? []), ...knowledgeInstalls],
    },
  }));
  args.architecture ??= "arm64";
  args.runtime ??= "nodejs24.x";
});
