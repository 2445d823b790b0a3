/**
 * The checks a plan and its settings pass before anything runs them: the plan
 * against the namespace's tools and the inputs it is given, an LLM for work that
 * needs a planner, the outgoing webhook URL. Tasks, forks, retries, triggers and
 * schedules all run the same ones, so they live here, apart from the start
 * protocol (`task-starter.ts`), which they need not import to check a plan.
 */
import { ValidationError } from "../errors";
import { loadOnce } from "../load-once";
import type { PlanCompat } from "../plan/compat-mode";
import type { PlanProblem } from "../plan/problems";
import type { Plan } from "../plan/schema";
import type { NamespaceService, ResolvedNamespace } from "./namespaces";

// The plan checker (`plan/validate.ts` and its rules) is a chunk of its own,
// loaded by the first plan checked: the worker builds these checks (forks,
// sub-tasks) but most of its cold starts check no plan.
const loadValidator = loadOnce(() => import("../plan/validate"));

export interface PlanChecksDeps {
  namespaces: Pick<NamespaceService, "resolve">;
  /**
   * Checks an outgoing webhook URL as delivery's guard will (https to a public host, the
   * addresses its name resolves to); rejects with ValidationError (`bad_webhook_url`).
   */
  checkWebhookUrl: (url: string) => void | Promise<void>;
  /** False when no LLM is configured: a goal (which needs a planner) is refused at once. */
  llmConfigured?: boolean;
}

/** The checks of a plan before it runs; each throws `ValidationError` (422) that says what to change. */
export class PlanChecks {
  constructor(private readonly deps: PlanChecksDeps) {}

  /**
   * Validates a plan against the namespace's tools; 422 with every problem. `compat`:
   * the branch's own mode (a task may override its namespace's); absent, the namespace's.
   */
  async validate(
    tenant: string,
    namespace: string,
    plan: unknown,
    inputs: Iterable<string>,
    compat?: PlanCompat,
  ): Promise<Plan> {
    const resolved = await this.deps.namespaces.resolve(tenant, namespace);
    return (await this.checkPlan(resolved, plan, inputs, compat)).plan;
  }

  /**
   * Validates a plan against a namespace already read (`NamespaceService.resolve`),
   * for callers that need the namespace anyway; 422 with every problem.
   */
  async validateIn(
    namespace: ResolvedNamespace,
    plan: unknown,
    inputs: Iterable<string>,
  ): Promise<Plan> {
    return (await this.checkPlan(namespace, plan, inputs)).plan;
  }

  /**
   * {@link validateIn} with the warnings of a plan that passed (StackVM forms
   * rewritten, keys the VM ignores, instructions never reached); 422 with every problem.
   */
  async checkPlan(
    namespace: ResolvedNamespace,
    plan: unknown,
    inputs: Iterable<string>,
    compat: PlanCompat = namespace.config.plan_compat ?? "strict",
  ): Promise<{ plan: Plan; warnings: PlanProblem[] }> {
    const { validatePlan } = await loadValidator();
    const result = validatePlan(plan, {
      tools: namespace.tools.all,
      allowedTools: namespace.tools.allowed,
      inputs: new Set(inputs),
      compat,
      // An adaptive namespace's plan may stop before final_answer: the planner writes the rest.
      partial: namespace.config.planning === "adaptive",
    });
    if (!result.ok) {
      throw new ValidationError(
        "invalid_plan",
        `the plan has ${result.problems.length} problem(s): ${result.problems
          .slice(0, 3)
          .map((p) => `${p.path}: ${p.message}`)
          .join("; ")}`,
        { problems: result.problems, warnings: result.warnings },
      );
    }
    return { plan: result.plan, warnings: result.warnings };
  }

  /** False when no LLM is configured (a goal is then refused with 422 `llm_not_configured`). */
  get llmConfigured(): boolean {
    return this.deps.llmConfigured !== false;
  }

  /**
   * Refuses work that needs a planner when no LLM is configured, saying what to set;
   * `need` says what needs it, `instead` what works without one.
   */
  requireLlm(
    need = "a goal needs one to write its plan",
    instead = "send a plan instead of a goal",
  ): void {
    if (this.deps.llmConfigured !== false) return;
    throw new ValidationError(
      "llm_not_configured",
      `no LLM is configured, and ${need}: set OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama at http://127.0.0.1:11434/v1, with OPENAI_API_KEY if it needs one) or OPENAI_API_KEY alone (OpenAI), and LLM_MODEL, then restart (on AWS: npx sst secret set OpenaiApiKey, OpenaiBaseUrl or LlmProvider bedrock, then deploy); or ${instead}`,
    );
  }

  /** Refuses a webhook URL that delivery would refuse (`webhook-target.ts`), before anything is stored. */
  async checkWebhookUrl(url: string): Promise<void> {
    await this.deps.checkWebhookUrl(url);
  }
}
