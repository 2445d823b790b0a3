/**
 * The API client: `fetch` with the key, JSON in and out, and every failure turned
 * into a `CliError` whose exit code and message tell a script or a person what
 * happened and what to do.
 */
import type { CliConfig } from "./config";
import { CliError, EXIT, type ExitCode } from "./exit-codes";
import { plural } from "./render";

export interface Client {
  readonly url: string;
  /** A JSON request; `auth: "admin"` sends the operator key instead of the tenant's. */
  request<T = unknown>(
    method: string,
    path: string,
    options?: { body?: unknown; auth?: "tenant" | "admin"; query?: Record<string, unknown> },
  ): Promise<T>;
  /** A raw streaming GET (for Server-Sent Events). */
  stream(path: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response>;
}

interface ApiErrorBody {
  error?: { code?: string; message?: string; details?: unknown };
}

export function createClient(config: CliConfig): Client {
  function authHeader(auth: "tenant" | "admin"): Record<string, string> {
    if (auth === "admin") {
      if (!config.adminKey) {
        throw new CliError(
          EXIT.auth,
          "this command needs the operator key: set STACKVM_ADMIN_KEY to the key the server was started with",
        );
      }
      return { authorization: `Bearer ${config.adminKey}` };
    }
    if (!config.apiKey) {
      throw new CliError(
        EXIT.auth,
        "no API key: set STACKVM_API_KEY, or start the local stack with `npm start` (it keeps its key in .stackvm/api-key)",
      );
    }
    return { authorization: `Bearer ${config.apiKey}` };
  }

  async function send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    try {
      return await fetch(`${config.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new CliError(
        EXIT.unavailable,
        `cannot reach StackVM at ${config.url} (${why}; the address from ${config.urlSource}): start the local stack with \`npm start\`, or set STACKVM_URL to your deployment`,
      );
    }
  }

  async function fail(response: Response, method: string, path: string): Promise<never> {
    const text = await response.text();
    let parsed: ApiErrorBody = {};
    try {
      parsed = JSON.parse(text) as ApiErrorBody;
    } catch {
      // not JSON: use the status line
    }
    const status = response.status;
    const code = parsed.error?.code ?? `http_${status}`;
    const listed = problems(parsed);
    // The API's message repeats the first problems: with the list below it, say only how many.
    const message = listed.length
      ? `${code === "invalid_plan" ? "the plan" : "the request"} has ${plural(listed.length, "problem")}`
      : (parsed.error?.message ?? (text.slice(0, 200) || response.statusText));
    let exit: ExitCode = EXIT.rejected;
    let hint = "";
    if (status === 401 || status === 403) {
      exit = EXIT.auth;
      hint =
        status === 401
          ? ` (the key from ${config.apiKeySource} was refused: check STACKVM_API_KEY and STACKVM_URL)`
          : "";
    } else if (status === 404) exit = EXIT.notFound;
    else if (status >= 500) exit = EXIT.unavailable;
    const shown =
      listed.length > 20 ? [...listed.slice(0, 20), `… and ${listed.length - 20} more`] : listed;
    throw new CliError(exit, `${method} ${path}: ${message} [${code}]${hint}`, shown);
  }

  return {
    url: config.url,
    async request<T>(
      method: string,
      path: string,
      options: { body?: unknown; auth?: "tenant" | "admin"; query?: Record<string, unknown> } = {},
    ): Promise<T> {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(options.query ?? {})) {
        if (v !== undefined && v !== null && v !== "") query.set(k, String(v));
      }
      const full = query.size ? `${path}?${query}` : path;
      const headers: Record<string, string> = {
        accept: "application/json",
        ...authHeader(options.auth ?? "tenant"),
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      };
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      const response = await send(method, full, headers, body);
      if (!response.ok) return fail(response, method, path);
      if (response.status === 204) return undefined as T;
      return (await response.json()) as T;
    },
    async stream(path, headers, signal) {
      const response = await send(
        "GET",
        path,
        { accept: "text/event-stream", ...authHeader("tenant"), ...headers },
        undefined,
        signal,
      );
      if (!response.ok) return fail(response, "GET", path);
      return response;
    },
  };
}

/** The problems of a 422 (a plan that fails validation), one line each, with their hints. */
function problems(body: ApiErrorBody): string[] {
  const details = body.error?.details as { problems?: unknown } | unknown[] | undefined;
  const list = Array.isArray(details)
    ? details
    : Array.isArray((details as { problems?: unknown })?.problems)
      ? ((details as { problems: unknown[] }).problems as unknown[])
      : [];
  return list.map((p) => {
    const item = p as { path?: unknown; message?: unknown; hint?: unknown };
    const where = Array.isArray(item.path) ? item.path.join(".") : String(item.path ?? "");
    const hint = item.hint ? ` (${String(item.hint)})` : "";
    return `${where ? `${where}: ` : ""}${String(item.message ?? JSON.stringify(p))}${hint}`;
  });
}
