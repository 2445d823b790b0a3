/**
 * Templates: plans saved from a commit with the task's goal (StackVM's
 * `save_best_plan` and plan cache). A goal whose normalized text equals a saved
 * template's reuses its plan with no LLM call; otherwise the closest template of
 * the namespace is shown to the planner as an example.
 *
 * A template is keyed by its namespace and normalized goal, so saving a plan for
 * the same goal again replaces the earlier one: the cache holds one plan per goal,
 * the last one saved.
 */
import { NotFoundError, ValidationError } from "../errors";
import { digest } from "../ids";
import type { Plan } from "../plan/schema";
import type { TemplateMatch } from "../planning/planner";
import type { Clock } from "../ports/clock";
import type { TemplateRecord, TemplateStore } from "../store/template-store";
import { parseTrailingFormat } from "../vm/goal-text";
import type { BranchService } from "./branches";
import type { TaskReads } from "./task-reads";
import type { Template } from "./template-record";

/** A non-exact match needs at least this similarity (0..1) to serve as an example. */
export const SIMILARITY_THRESHOLD = 0.5;

/** How many of a namespace's templates the similarity search reads at most. */
const SIMILAR_SCAN_LIMIT = 200;

/**
 * The goal as the cache compares it: lowercased, whitespace collapsed, trailing
 * `.`, `,`, `!` and `?` stripped.
 *
 * @example
 * normalizeGoal("  What is  TiDB? ") // "what is tidb"
 */
export function normalizeGoal(goal: string): string {
  return goal
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s.,!?]+$/, "");
}

function bigrams(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < text.length - 1; i++) {
    const pair = text.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return counts;
}

/**
 * Similarity of two normalized goals, 0..1: the Sørensen–Dice coefficient of their
 * character bigrams (robust to word order and small edits, like difflib's ratio).
 */
export function goalSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const x = bigrams(a);
  const y = bigrams(b);
  let shared = 0;
  let total = 0;
  for (const n of x.values()) total += n;
  for (const [pair, n] of y) {
    total += n;
    shared += Math.min(n, x.get(pair) ?? 0);
  }
  return total === 0 ? 0 : (2 * shared) / total;
}

const templateId = (namespace: string, normalized: string): string =>
  `tpl_${digest("template", namespace, normalized).slice(0, 24)}`;

const ID = /^tpl_[0-9a-f]{24}$/;

export interface TemplateServiceDeps {
  templates: TemplateStore;
  clock: Clock;
  tasks: Pick<TaskReads, "record">;
  branches: BranchService;
}

export class TemplateService {
  constructor(private readonly deps: TemplateServiceDeps) {}

  /** Saves the plan at a commit with the task's goal, in the task's namespace. */
  async save(tenant: string, taskId: string, commitId: string): Promise<{ template_id: string }> {
    const task = await this.deps.tasks.record(tenant, taskId);
    if (!task.goal) {
      throw new ValidationError(
        "no_goal",
        `task '${taskId}' was started from a plan without a goal: templates are found by goal, so only a task with a goal can save one`,
      );
    }
    const state = await this.deps.branches.storedState(task, commitId);
    if (!state.plan || state.plan.length === 0) {
      throw new ValidationError(
        "no_plan",
        `commit '${commitId}' has no plan (planning failed before one was written): save a commit of a branch that ran`,
      );
    }
    const goal = parseTrailingFormat(task.goal).goal;
    const normalized = normalizeGoal(goal);
    const id = templateId(task.namespace, normalized);
    const item: TemplateRecord = {
      template_id: id,
      namespace: task.namespace,
      goal,
      normalized_goal: normalized,
      plan: state.plan,
      task_id: taskId,
      commit_id: commitId,
      created_at: new Date(this.deps.clock.now()).toISOString(),
    };
    await this.deps.templates.put(tenant, item);
    return { template_id: id };
  }

  async get(tenant: string, id: string): Promise<Template> {
    const item = ID.test(id) ? await this.deps.templates.get(tenant, id) : null;
    if (!item) throw new NotFoundError("template", id);
    return present(item);
  }

  async list(
    tenant: string,
    options: { namespace?: string; limit: number; cursor?: string | null },
  ): Promise<{ templates: Template[]; next_cursor: string | null }> {
    const page = await this.deps.templates.list(tenant, options);
    return { templates: page.items.map(present), next_cursor: page.cursor };
  }

  async delete(tenant: string, id: string): Promise<void> {
    await this.get(tenant, id);
    await this.deps.templates.delete(tenant, id);
  }

  /**
   * The planner's hook: the template whose normalized goal equals this one
   * (`exact`, one read), else the most similar of the namespace above
   * `SIMILARITY_THRESHOLD`, else null.
   */
  async find(tenant: string, namespace: string, goal: string): Promise<TemplateMatch | null> {
    const normalized = normalizeGoal(goal);
    const exact = await this.deps.templates.get(tenant, templateId(namespace, normalized));
    if (exact) return match(exact, true);
    let best: { item: TemplateRecord; score: number } | null = null;
    let read = 0;
    for await (const page of this.deps.templates.pagesOf(tenant, namespace)) {
      for (const item of page) {
        const score = goalSimilarity(normalized, item.normalized_goal);
        if (score >= SIMILARITY_THRESHOLD && (!best || score > best.score)) best = { item, score };
      }
      read += page.length;
      if (read >= SIMILAR_SCAN_LIMIT) break;
    }
    return best ? match(best.item, false) : null;
  }
}

function match(item: TemplateRecord, exact: boolean): TemplateMatch {
  return { template_id: item.template_id, goal: item.goal, plan: item.plan as Plan, exact };
}

function present(item: TemplateRecord): Template {
  return {
    template_id: item.template_id,
    namespace: item.namespace,
    goal: item.goal,
    plan: item.plan,
    task_id: item.task_id,
    commit_id: item.commit_id,
    created_at: item.created_at,
  };
}
