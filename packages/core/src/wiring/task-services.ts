/**
 * Tasks and the branches that fork and run under them, wired together: the
 * smallest piece of the wiring, which the step services (`step-services.ts`)
 * and the minimal test harness (`testing/memory-system.ts`) both build, so that
 * forks go through the same plan checks and admission as the tasks they fork.
 */
import { BranchService } from "../service/branches";
import { TaskService, type TaskServiceDeps } from "../service/tasks";

/** Tasks, and branches over their reads, checks and admission. */
export interface TaskServices {
  tasks: TaskService;
  branches: BranchService;
}

/**
 * Builds the task service and the branch service over it.
 *
 * @example
 * const { tasks, branches } = wireTaskServices({ store, blobs, queue, clock, namespaces, presenter, tools, checkWebhookUrl });
 */
export function wireTaskServices(deps: TaskServiceDeps): TaskServices {
  const tasks = new TaskService(deps);
  const branches = new BranchService({
    store: deps.store,
    blobs: deps.blobs,
    queue: deps.queue,
    clock: deps.clock,
    presenter: deps.presenter,
    tasks: tasks.reads,
    checks: tasks.checks,
    admission: tasks.admission,
  });
  return { tasks, branches };
}
