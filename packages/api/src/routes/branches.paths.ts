/**
 * The routes `branches.ts` registers, by name (each one's OpenAPI operationId), in
 * its order: declared apart from it so that the API's start routes them without
 * loading it (`route-groups.ts`), which hands it to the file's register
 * function: each route's method, path and operationId come from here.
 */
import { declareRoutes } from "../route-declaration";

export const BRANCHES_ROUTES = declareRoutes("branches", {
  listBranches: "GET /v1/tasks/{task_id}/branches",
  getBranch: "GET /v1/tasks/{task_id}/branches/{name}",
  listCommits: "GET /v1/tasks/{task_id}/branches/{name}/commits",
  forkBranch: "POST /v1/tasks/{task_id}/branches",
  promoteBranch: "POST /v1/tasks/{task_id}/branches/{name}/promote",
  deleteBranch: "DELETE /v1/tasks/{task_id}/branches/{name}",
  getCommit: "GET /v1/tasks/{task_id}/commits/{commit_id}",
  getCommitState: "GET /v1/tasks/{task_id}/commits/{commit_id}/state",
  getCommitDiff: "GET /v1/tasks/{task_id}/commits/{commit_id}/diff",
});
