/**
 * The eval's client of the public HTTP API: what an integrator's code does with
 * `fetch` and an API key, nothing the stack's internals offer.
 */

/** An answer of the API: its status and parsed JSON body (or text). */
export interface ApiAnswer {
  status: number;
  body: any;
}

/** A client for one stack and key. */
export class ApiClient {
  constructor(
    readonly url: string,
    private readonly key: string,
  ) {}

  /** One request; JSON in and out. A 429 waits as `Retry-After` says and asks again. */
  async call(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    for (let tries = 1; ; tries++) {
      const answer = await this.once(method, path, body);
      if (answer.status !== 429 || tries >= 5) return answer;
      await new Promise((r) => setTimeout(r, 1000 * tries));
    }
  }

  private async once(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      // The API never redirects: a redirect comes from something else, which gets no key.
      redirect: "error",
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await parse(response) };
  }

  /** Like `call`, but any status outside `ok` throws with what the API said. */
  async expect(method: string, path: string, body: unknown, ok: number[]): Promise<any> {
    const answer = await this.call(method, path, body);
    if (!ok.includes(answer.status)) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${describe(answer.body)}`);
    }
    return answer.body;
  }

  /** A multipart upload of one document to a knowledge base. */
  async upload(
    kb: string,
    file: { filename: string; content_type: string; content: string },
  ): Promise<ApiAnswer> {
    const form = new FormData();
    form.append("file", new Blob([file.content], { type: file.content_type }), file.filename);
    const response = await fetch(`${this.url}/v1/knowledge-bases/${kb}/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.key}` },
      body: form,
      redirect: "error",
    });
    return { status: response.status, body: await parse(response) };
  }

  /** Every commit of a branch, oldest first, following the pages. */
  async commits(taskId: string, branch: string): Promise<any[]> {
    const all: any[] = [];
    let cursor: string | undefined;
    do {
      const query = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await this.expect(
        "GET",
        `/v1/tasks/${taskId}/branches/${branch}/commits?${query}`,
        undefined,
        [200],
      );
      all.push(...page.commits);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return all.reverse();
  }
}

async function parse(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** The API's error in one line: its code and message when it has them. */
export function describe(body: any): string {
  const error = body?.error;
  if (error && typeof error === "object") return `${error.code ?? "error"}: ${error.message ?? ""}`;
  return typeof body === "string"
    ? body.slice(0, 300)
    : (JSON.stringify(body)?.slice(0, 300) ?? "");
}
