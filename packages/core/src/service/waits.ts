/**
 * Waiting branches as a product: answers to `ask_human` (the API, the console,
 * the CLI, and the resume URL of the `task.waiting` webhook), and the hooks the
 * step runs when a branch begins to wait or runs on (`vm/wait.ts` does the rest).
 *
 * An answer is one conditional update of the branch: it must still wait for this
 * question (`waiting_id`), so two answers at once, an answer delivered twice, or
 * a resume token used twice leave exactly one answer; then one step message runs
 * the `ask_human` step, which commits the answer as its output.
 *
 * Running slots: a waiting task holds none. When a task's branch begins to wait
 * and no other branch of the task runs, its slot is freed (the tenant's next
 * queued task may start). The answer or the wake claims a slot again; when the
 * tenant has none free, the branch turns `queued` and starts, at its head, when
 * one frees, oldest first, like a new task.
 *
 * Resume tokens (`rsm_…`) are signed, not stored: the payload names (tenant,
 * task, branch, wait id, expiry) and an HMAC-SHA256 under a key derived from the
 * tenant's signing secret seals it. A forged token fails the HMAC; a used one
 * names a wait that is over (the branch's `waiting_id` changed); an expired one
 * is past its time: all answer 404, as an unknown one.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { ConflictError, isErrorKind, NotFoundError, ValidationError } from "../errors";
import { loadJsonSchemaCompiler } from "../json-schema/compile";
import type { Branch } from "../model";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import type { Queue } from "../ports/queue";
import type { AnswerSource, BranchRecord, WaitingRecord } from "../store/records";
import type { TaskStore } from "../store/task-store";
import { checkAnswer } from "../tools/ask-human";
import { enqueueNext } from "../vm/step";
import type { TerminalHook } from "../vm/step-deps";
import type { Presenter } from "./present";
import type { RunningSlots } from "./running-slots";
import type { TaskReads } from "./task-reads";

/** How long a resume URL works when its question has no timeout: 30 days. */
const RESUME_TOKEN_SECONDS = 30 * 24 * 60 * 60;
const TOKEN_PREFIX = "rsm_";

export interface WaitServiceDeps {
  store: TaskStore;
  queue: Queue;
  clock: Clock;
  presenter: Presenter;
  tasks: Pick<TaskReads, "record">;
  slots: RunningSlots;
  log: Log;
  /** The tenant's signing secret (`WebhookService.secret`), made on first use. */
  secret: (tenant: string) => Promise<string>;
  /**
   * The tenant's signing secret if it has one, made never (`WebhookService.existingSecret`):
   * what a resume token is checked with, since anyone can send one and a check
   * must write nothing. None: `secret`.
   */
  existingSecret?: (tenant: string) => Promise<string | null>;
  /** Queues the `task.waiting` webhook (`WebhookService.waitingHook`). */
  notify?: (branch: BranchRecord, resumeUrl: string) => Promise<void>;
  /** The API's public origin for resume URLs (`STACKVM_PUBLIC_URL`, or the local stack's URL). */
  publicUrl: () => string | null;
}

interface TokenPayload {
  /** tenant, task, branch, wait id, expiry (epoch seconds) */
  t: string;
  k: string;
  b: string;
  w: string;
  e: number;
}

export class WaitService {
  constructor(private readonly deps: WaitServiceDeps) {}

  /**
   * Answers the question a branch waits on (`POST .../branches/{name}/input`):
   * 404 for another tenant's task, 409 when the branch does not wait for an
   * answer, 422 when the answer does not match the question's schema.
   */
  async answer(
    tenant: string,
    taskId: string,
    name: string,
    answer: unknown,
    via: AnswerSource,
  ): Promise<Branch> {
    const task = await this.deps.tasks.record(tenant, taskId);
    const branch = await this.deps.store.getBranch(task.tenant_id, task.task_id, name);
    if (!branch) throw new NotFoundError("branch", name);
    return this.deps.presenter.branch(await this.store(branch, null, answer, via));
  }

  /**
   * Answers through a resume token (`POST /v1/resume/{token}`, no API key): 404
   * for a forged, used or expired token, 422 for an answer that does not match.
   */
  async resume(
    token: string,
    answer: unknown,
  ): Promise<{ task_id: string; branch: string; status: string }> {
    const payload = await this.verify(token);
    const gone = () => new NotFoundError("resume token", `${token.slice(0, 12)}…`);
    if (!payload) throw gone();
    const branch = await this.deps.store.getBranch(payload.t, payload.k, payload.b);
    if (!branch || branch.waiting?.id !== payload.w || branch.waiting.answer) throw gone();
    const stored = await this.store(branch, payload.w, answer, "resume_url");
    return { task_id: stored.task_id, branch: stored.name, status: stored.status };
  }

  /** The signed, single-use token of the branch's current question. */
  async token(branch: BranchRecord): Promise<string> {
    const waiting = branch.waiting;
    if (!waiting) throw new ConflictError("the branch does not wait", "not_waiting");
    const expires = waiting.expires_at
      ? Math.ceil(Date.parse(waiting.expires_at) / 1000)
      : Math.floor(this.deps.clock.now() / 1000) + RESUME_TOKEN_SECONDS;
    const payload: TokenPayload = {
      t: branch.tenant_id,
      k: branch.task_id,
      b: branch.name,
      w: waiting.id,
      e: expires,
    };
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${TOKEN_PREFIX}${body}.${await this.mac(branch.tenant_id, body)}`;
  }

  /** The payload of a well-signed, unexpired token, or null. */
  private async verify(token: string): Promise<TokenPayload | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 1024) return null;
    const [body, mac, extra] = token.slice(TOKEN_PREFIX.length).split(".");
    if (!body || !mac || extra !== undefined) return null;
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString()) as TokenPayload;
    } catch {
      return null;
    }
    if (
      typeof payload?.t !== "string" ||
      typeof payload.k !== "string" ||
      typeof payload.b !== "string" ||
      typeof payload.w !== "string" ||
      typeof payload.e !== "number"
    ) {
      return null;
    }
    // A tenant without a secret has minted no token: nothing to check, nothing written.
    const secret = this.deps.existingSecret
      ? await this.deps.existingSecret(payload.t)
      : await this.deps.secret(payload.t);
    if (secret === null) return null;
    const expected = Buffer.from(macWith(secret, body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    if (payload.e * 1000 <= this.deps.clock.now()) return null;
    return payload;
  }

  private async mac(tenant: string, body: string): Promise<string> {
    return macWith(await this.deps.secret(tenant), body);
  }

  /**
   * Stores a valid answer on the branch (if it still waits for this question),
   * then claims a running slot and enqueues the step, or queues the branch.
   */
  private async store(
    branch: BranchRecord,
    waitId: string | null,
    answer: unknown,
    via: AnswerSource,
  ): Promise<BranchRecord> {
    const waiting = branch.waiting;
    const now = this.deps.clock.now();
    if (
      branch.status !== "waiting" ||
      waiting?.kind !== "input" ||
      waiting.answer ||
      branch.cancel_requested
    ) {
      throw new ConflictError(
        `branch '${branch.name}' is ${branch.status}, not waiting for an answer`,
        "not_waiting",
      );
    }
    if (waitId !== null && waiting.id !== waitId) throw new NotFoundError("question", waitId);
    if (waiting.expires_at && now >= Date.parse(waiting.expires_at)) {
      throw new ConflictError(
        `the question timed out at ${waiting.expires_at}; the branch goes on without this answer`,
        "question_timed_out",
      );
    }
    await loadJsonSchemaCompiler();
    const checked = checkAnswer(waiting.schema, answer);
    if (!checked.ok) {
      throw new ValidationError(
        "answer_does_not_match",
        `the answer does not match the question's schema ${JSON.stringify(waiting.schema)}: ${checked.message}. The branch still waits: send an answer of that shape.`,
      );
    }
    const at = new Date(now).toISOString();
    const claimed = await this.deps.slots.claim(branch.tenant_id, branch.task_id);
    const answered: WaitingRecord = { ...waiting, answer: { value: checked.value, via, at } };
    let updated: BranchRecord;
    try {
      updated = await this.deps.store.updateBranch(
        branch.tenant_id,
        branch.task_id,
        branch.name,
        {
          set: [
            [["waiting"], answered],
            [["waiting_id"], null],
            [["status"], claimed ? "running" : "queued"],
            [["updated_at"], at],
          ],
        },
        {
          exists: true,
          equals: {
            status: "waiting",
            head: branch.head,
            waiting_id: waiting.id,
            cancel_requested: false,
          },
        },
      );
    } catch (error) {
      if (!isErrorKind(error, "conflict")) throw error;
      // Another answer, a cancel or a timeout was first.
      if (waitId !== null) throw new NotFoundError("question", waitId);
      throw new ConflictError(
        `branch '${branch.name}' no longer waits for this answer`,
        "not_waiting",
      );
    }
    this.deps.log.info("question answered", {
      tenant_id: branch.tenant_id,
      task_id: branch.task_id,
      branch: branch.name,
      via,
      queued: !claimed,
    });
    if (claimed) await enqueueNext(this.deps, updated, updated.head, `answer-${waiting.id}`);
    else await this.deps.slots.wait(branch.tenant_id, branch.task_id, at, branch.name);
    return updated;
  }

  /**
   * The step's `onWaiting` hook: the task shows `waiting`, its slot is freed when
   * no other branch of it runs, and a question sends `task.waiting`. Safe to repeat.
   */
  waitingHook(): TerminalHook {
    return async (branch) => {
      const { tenant_id: tenant, task_id: taskId } = branch;
      const now = new Date(this.deps.clock.now()).toISOString();
      const task = await this.deps.store.getTask(tenant, taskId);
      if (!task) return;
      if (task.branch === branch.name) {
        await this.deps.store
          .updateTask(
            tenant,
            taskId,
            { status: "waiting", updated_at: now },
            { exists: true, equals: { status: "running" } },
          )
          .catch((error: unknown) => {
            if (!isErrorKind(error, "conflict")) throw error;
          });
      }
      const others = (await this.deps.store.listBranches(tenant, taskId)).filter(
        (b) => b.name !== branch.name && (b.status === "running" || b.status === "queued"),
      );
      if (others.length === 0) await this.deps.slots.release(tenant, taskId);
      if (branch.waiting?.kind === "input" && task.webhook_url && this.deps.notify) {
        await this.deps.notify(branch, await this.resumeUrl(branch));
      }
    };
  }

  /** The resume URL of the branch's question. */
  async resumeUrl(branch: BranchRecord): Promise<string> {
    const base = (this.deps.publicUrl() ?? "").replace(/\/$/, "");
    return `${base}/v1/resume/${await this.token(branch)}`;
  }

  /**
   * For the step when a time wait is due: claims a running slot, or turns the
   * branch `queued` (it starts at its head when a slot frees). True: run the step.
   */
  async resumeSlot(branch: BranchRecord): Promise<boolean> {
    if (await this.deps.slots.claim(branch.tenant_id, branch.task_id)) return true;
    const at = new Date(this.deps.clock.now()).toISOString();
    await this.deps.store
      .updateBranch(
        branch.tenant_id,
        branch.task_id,
        branch.name,
        {
          set: [
            [["status"], "queued"],
            [["updated_at"], at],
          ],
        },
        { exists: true, equals: { status: "waiting", head: branch.head } },
      )
      .catch((error: unknown) => {
        if (!isErrorKind(error, "conflict")) throw error;
      });
    await this.deps.slots.wait(branch.tenant_id, branch.task_id, at, branch.name);
    return false;
  }

  /** The step's `onResume` hook: the task shows `running` again. */
  resumeHook(): TerminalHook {
    return async (branch) => {
      const task = await this.deps.store.getTask(branch.tenant_id, branch.task_id);
      if (task?.branch !== branch.name) return;
      await this.deps.store
        .updateTask(
          branch.tenant_id,
          branch.task_id,
          { status: "running", updated_at: new Date(this.deps.clock.now()).toISOString() },
          { exists: true, equals: { status: "waiting" } },
        )
        .catch((error: unknown) => {
          if (!isErrorKind(error, "conflict")) throw error;
        });
    };
  }
}

/** A token's MAC: a key of its own, derived from the signing secret, so a token is never a webhook signature. */
function macWith(secret: string, body: string): string {
  const key = createHmac("sha256", secret).update("stackvm resume token v1").digest();
  return createHmac("sha256", key).update(body).digest("base64url");
}
