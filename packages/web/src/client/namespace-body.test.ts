import type { Namespace } from "@stackvm/core";
import { describe, expect, it } from "vitest";
import { namespaceBody } from "./namespace-body";

const saved: Namespace = {
  name: "research",
  allowed_tools: ["llm_generate"],
  allowed_hosts: [],
  description: "old",
  code_tools: ["mine"],
  http_tools: [],
  mcp_servers: [],
  sandbox_limits: { time_ms: 5000 },
  knowledge_bases: ["docs"],
  parallel_width: 2,
  plan_compat: "stackvm",
  planning: "adaptive",
  created_at: null,
  updated_at: null,
};
const edits = {
  description: "new",
  allowed_tools: ["http_request"],
  allowed_hosts: ["a.example"],
  planner_instructions: "Prefer one llm_generate.",
  planning: "up_front" as const,
};

describe("the namespace editor's body", () => {
  it("keeps the settings the form does not show, and takes the form's fields", () => {
    // The form's planning wins over the saved one: choosing up front turns adaptive off.
    expect(namespaceBody(saved, edits)).toEqual({
      ...edits,
      sandbox_limits: { time_ms: 5000 },
      knowledge_bases: ["docs"],
      parallel_width: 2,
      plan_compat: "stackvm",
    });
    expect(namespaceBody(saved, { ...edits, planning: "adaptive" }).planning).toBe("adaptive");
  });

  it("sends only the form's fields for a new namespace, and nothing read-only", () => {
    expect(namespaceBody(null, edits)).toEqual(edits);
    const {
      knowledge_bases: _k,
      parallel_width: _p,
      sandbox_limits: _s,
      planning: _a,
      ...plain
    } = saved;
    expect(Object.keys(namespaceBody(plain, edits)).sort()).toEqual([
      "allowed_hosts",
      "allowed_tools",
      "description",
      "plan_compat",
      "planner_instructions",
      "planning",
    ]);
  });
});
