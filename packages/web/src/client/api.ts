/**
 * The console's only way to the service: the public HTTP API, with the API key
 * from sign-in as the bearer header. Every failure becomes an {@link ApiError}
 * carrying the API's stable code and message, so each screen can show it where
 * the user acted.
 */
import { parseShown } from "./bidi";

/** The API's error body: `{"error": {"code", "message", "details"}}`. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status, or 0 when the API could not be reached. */
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A typed `fetch` of the public API. */
export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<void>;
  /** A raw request with the bearer header, for streams. */
  raw(path: string, init?: RequestInit): Promise<Response>;
}

export interface ApiOptions {
  /** The key to send; read on every call so that signing out takes effect at once. */
  key: () => string | null;
  /** Called on 401: the key was wrong or has been revoked since sign-in. */
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
}

/** Turns a failed response into an ApiError, with a message even when the body is not JSON. */
export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as {
      error?: { code?: string; message?: string; details?: unknown };
    };
    if (body.error?.message) {
      return new ApiError(
        response.status,
        body.error.code ?? "error",
        body.error.message,
        body.error.details,
      );
    }
  } catch {
    // not JSON: fall through to a message built from the status
  }
  return new ApiError(
    response.status,
    `http_${response.status}`,
    `the API answered ${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ""}`,
  );
}

export function createApi(options: ApiOptions): Api {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));

  async function raw(path: string, init: RequestInit = {}): Promise<Response> {
    const key = options.key();
    const headers = new Headers(init.headers);
    if (key) headers.set("authorization", `Bearer ${key}`);
    try {
      return await doFetch(path, { ...init, headers });
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      throw new ApiError(
        0,
        "unreachable",
        `could not reach the API (${(error as Error).message}); check that the service is running`,
      );
    }
  }

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await raw(path, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401) options.onUnauthorized?.(error);
      throw error;
    }
    if (response.status === 204) return undefined as T;
    // Shown to a person: bidirectional controls in names and values are made visible.
    return parseShown(await response.text()) as T;
  }

  return {
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
    put: (path, body) => call("PUT", path, body),
    patch: (path, body) => call("PATCH", path, body),
    delete: (path) => call("DELETE", path),
    raw,
  };
}

/** Encodes one path segment. */
export const seg = (value: string): string => encodeURIComponent(value);
