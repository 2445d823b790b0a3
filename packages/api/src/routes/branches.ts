/**
 * `/v1/tasks/{task_id}/branches` and `/commits`: the history of a task, forks,
 * promotion, diffs and templates.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { Branch, Commit, Diff, ForkInput, State, Task } from "@stackvm/core/api-records";
import type { ApiApp } from "../env";
import {
  BranchParams,
  bearer,
  CommitParams,
  commonErrors,
  conflictError,
  invalidError,
  json,
  jsonBody,
  Paging,
  TaskIdParam,
} from "../schemas";
import type { BRANCHES_ROUTES } from "./branches.paths";

export function registerBranchRoutes(app: ApiApp, routes: typeof BRANCHES_ROUTES): void {
  app.openapi(
    createRoute({
      ...routes.listBranches,
      summary: "List a task's branches",
      security: bearer,
      request: { params: TaskIdParam },
      responses: {
        200: json(z.object({ branches: z.array(Branch) }), "Branches"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      return c.json(
        { branches: await c.get("deps").branches.list(c.get("tenantId"), task_id) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.getBranch,
      summary: "Read a branch with its state at the head",
      security: bearer,
      request: { params: BranchParams },
      responses: { 200: json(Branch.extend({ state: State }), "The branch"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, name } = c.req.valid("param");
      return c.json(await c.get("deps").branches.get(c.get("tenantId"), task_id, name), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.listCommits,
      summary: "List the commits reachable from a branch head, newest first",
      description: "Follows parents back to the root: commits before the fork point are included.",
      security: bearer,
      request: { params: BranchParams, query: Paging },
      responses: {
        200: json(
          z.object({ commits: z.array(Commit), next_cursor: z.string().nullable() }),
          "Commits",
        ),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { task_id, name } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      const page = await c
        .get("deps")
        .branches.commits(c.get("tenantId"), task_id, name, limit, cursor ?? null);
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.forkBranch,
      summary: "Fork a branch at a commit",
      description:
        "With none of `suggestion`, `plan`, `step`, the branch re-executes from the commit with the plan it had. " +
        "The new branch starts from the state at `from_commit`; steps before it are not run again.",
      security: bearer,
      request: { params: TaskIdParam, ...jsonBody(ForkInput) },
      responses: {
        202: json(Branch, "Forked"),
        ...commonErrors,
        ...conflictError,
        ...invalidError,
      },
    }),
    async (c) => {
      const { task_id } = c.req.valid("param");
      const branch = await c
        .get("deps")
        .branches.fork(c.get("tenantId"), task_id, c.req.valid("json"));
      return c.json(branch, 202);
    },
  );

  app.openapi(
    createRoute({
      ...routes.promoteBranch,
      summary: "Make this branch the task's result branch",
      security: bearer,
      request: { params: BranchParams },
      responses: { 200: json(Task, "The task"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, name } = c.req.valid("param");
      return c.json(await c.get("deps").branches.promote(c.get("tenantId"), task_id, name), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.deleteBranch,
      summary: "Delete a branch and the commits no other branch reaches",
      security: bearer,
      request: { params: BranchParams },
      responses: { 204: { description: "Deleted" }, ...commonErrors, ...conflictError },
    }),
    async (c) => {
      const { task_id, name } = c.req.valid("param");
      await c.get("deps").branches.delete(c.get("tenantId"), task_id, name);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      ...routes.getCommit,
      summary: "Read a commit",
      security: bearer,
      request: { params: CommitParams },
      responses: { 200: json(Commit, "The commit"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, commit_id } = c.req.valid("param");
      return c.json(
        await c.get("deps").branches.commit(c.get("tenantId"), task_id, commit_id),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      ...routes.getCommitState,
      summary: "The VM state at a commit",
      security: bearer,
      request: { params: CommitParams },
      responses: { 200: json(State, "The state"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, commit_id } = c.req.valid("param");
      return c.json(await c.get("deps").branches.state(c.get("tenantId"), task_id, commit_id), 200);
    },
  );

  app.openapi(
    createRoute({
      ...routes.getCommitDiff,
      summary: "Diff a commit against its parent or another commit",
      security: bearer,
      request: {
        params: CommitParams,
        query: z.object({ against: z.string().min(1).max(64).optional() }),
      },
      responses: { 200: json(Diff, "The diff"), ...commonErrors },
    }),
    async (c) => {
      const { task_id, commit_id } = c.req.valid("param");
      const { against } = c.req.valid("query");
      return c.json(
        await c.get("deps").branches.diff(c.get("tenantId"), task_id, commit_id, against),
        200,
      );
    },
  );
}
