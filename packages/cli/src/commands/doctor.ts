/**
 * `stackvm doctor`: is everything a task needs there, and what to fix if not.
 * The CLI checks what it can see itself (the API answers, the key is taken);
 * the server checks what only it can see (`GET /v1/doctor`: its LLM models,
 * embeddings and sandbox), since the CLI may run far from the server's settings.
 */
import { type Command, type Context, JSON_OPTION, printJson } from "../command";
import { CliError, EXIT } from "../exit-codes";
import { fit } from "../render";

interface Check {
  name: string;
  status: "ok" | "warning" | "failed" | "unchecked";
  detail: string;
  fix: string | null;
}

const MARK: Record<Check["status"], string> = {
  ok: "✓",
  warning: "!",
  failed: "✗",
  unchecked: "?",
};

/** Does anything answer at the URL? `/healthz` needs no key. */
async function apiCheck(url: string): Promise<Check> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    if (response.ok) {
      return { name: "api", status: "ok", detail: `StackVM answers at ${url}`, fix: null };
    }
    return {
      name: "api",
      status: "failed",
      detail: `${url}/healthz answered ${response.status}`,
      fix: "check that STACKVM_URL is the address of StackVM, not of another server",
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return {
      name: "api",
      status: "failed",
      detail: `cannot reach StackVM at ${url} (${cause})`,
      fix: "start the local stack with `npm start`, or set STACKVM_URL to your deployment",
    };
  }
}

/** When the server's checks ran, and whether they are an earlier run's given again. */
interface Freshness {
  checked_at: string;
  cached: boolean;
  age_seconds: number;
}

/** The key, then the server's own checks (`GET /v1/doctor`); each failure as a check. */
async function serverChecks(ctx: Context): Promise<{ checks: Check[]; fresh?: Freshness }> {
  try {
    const answer = await ctx.client.request<{ checks: Check[] } & Partial<Freshness>>(
      "GET",
      "/v1/doctor",
    );
    const key: Check = { name: "key", status: "ok", detail: "the API key was accepted", fix: null };
    const checks = [key, ...answer.checks.filter((c) => c.name !== "api")];
    // A server older than these fields answers without them.
    if (typeof answer.checked_at !== "string" || typeof answer.cached !== "boolean") {
      return { checks };
    }
    const fresh = {
      checked_at: answer.checked_at,
      cached: answer.cached,
      age_seconds: answer.age_seconds ?? 0,
    };
    return { checks, fresh };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    if (error.exitCode === EXIT.auth) {
      const key: Check = {
        name: "key",
        status: "failed",
        detail: error.message,
        fix: "set STACKVM_API_KEY to a key of this server (the local stack keeps one in .stackvm/api-key)",
      };
      return { checks: [key] };
    }
    // A server without the route (older), or one that failed: the rest is unknown.
    const server: Check = {
      name: "server",
      status: error.exitCode === EXIT.notFound ? "unchecked" : "failed",
      detail: error.message,
      fix:
        error.exitCode === EXIT.notFound
          ? "this server is older than `stackvm doctor`: update it to check its LLM and sandbox"
          : "see the server's log",
    };
    return { checks: [server] };
  }
}

/** The line that says the checks are an earlier run's, or null when they ran for this request. */
export function freshnessLine(fresh: Freshness): string | null {
  if (!fresh.cached) return null;
  const at = fresh.checked_at.replace(/\.\d+Z$/, "Z").replace("T", " ");
  return `the server's checks above are ${fresh.age_seconds} s old (run at ${at}), given again: it runs them at most once a minute, so ask again after that for new ones`;
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the API, the key, the LLM, the embeddings and the sandbox; say what to fix.",
  usage: "stackvm doctor [--json]",
  options: { ...JSON_OPTION },
  args: [],
  async run(ctx, v) {
    if (!v.json) ctx.out.wait(`checking StackVM at ${ctx.client.url}…`);
    let checks: Check[];
    let fresh: Freshness | undefined;
    try {
      const api = await apiCheck(ctx.client.url);
      const server = api.status === "ok" ? await serverChecks(ctx) : { checks: [] };
      checks = [api, ...server.checks];
      fresh = server.fresh;
    } finally {
      ctx.out.done();
    }
    const failed = checks.filter((c) => c.status === "failed").length;
    if (v.json) printJson(ctx.out, { ok: failed === 0, checks, ...fresh });
    else {
      const { out } = ctx;
      const colour = { ok: "green", warning: "yellow", failed: "red", unchecked: "gray" } as const;
      for (const check of checks) {
        const head = `${MARK[check.status]} ${check.name.padEnd(12)} `;
        out.line(
          out.paint(colour[check.status], head) + fit(check.detail, out.columns - head.length),
        );
        if (check.fix) out.line(`  ${" ".repeat(12)} fix: ${check.fix}`);
      }
      const stale = fresh ? freshnessLine(fresh) : null;
      if (stale) out.line(out.paint("gray", stale));
      out.line();
      out.line(
        failed === 0
          ? "everything a task needs is there"
          : `${failed} check${failed === 1 ? "" : "s"} failed: fix ${failed === 1 ? "it" : "them"} and run \`stackvm doctor\` again`,
      );
    }
    if (failed === 0) return EXIT.ok;
    return checks.some((c) => c.name === "key" && c.status === "failed")
      ? EXIT.auth
      : EXIT.unavailable;
  },
};
