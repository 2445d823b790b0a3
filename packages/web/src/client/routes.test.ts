import { describe, expect, it } from "vitest";
import { parseRoute, taskPath } from "./routes";

describe("parseRoute", () => {
  it.each([
    ["/ui", { page: "tasks" }],
    ["/ui/", { page: "tasks" }],
    ["/ui/tasks", { page: "tasks" }],
    ["/ui/tasks/new", { page: "new-task" }],
    ["/ui/tasks/tsk_1", { page: "task", taskId: "tsk_1" }],
    ["/ui/schedules", { page: "schedules" }],
    ["/ui/knowledge", { page: "knowledge" }],
    ["/ui/usage", { page: "usage" }],
    ["/ui/nope", { page: "not-found", path: "/ui/nope" }],
    ["/ui/tasks/%E0%A4%A", { page: "not-found", path: "/ui/tasks/%E0%A4%A" }],
  ])("reads %s", (path, route) => {
    expect(parseRoute(path)).toEqual(route);
  });

  it("makes task links that it reads back", () => {
    expect(taskPath("a/b", "c 1")).toBe("/ui/tasks/a%2Fb?commit=c%201");
    expect(parseRoute("/ui/tasks/a%2Fb")).toEqual({ page: "task", taskId: "a/b" });
  });
});
