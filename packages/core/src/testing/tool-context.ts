/**
 * A `ToolContext` for the tools' unit tests (not exported from the package). The
 * parts a test does not give throw when touched, so a tool that uses more than it
 * should fails loudly.
 */

import type { NamespaceConfig } from "../model";
import { CLOSED_POLICY } from "../net/outbound-policy";
import type { ToolContext } from "../tools/tool";

function unused(name: string): never {
  throw new Error(`test context: ${name} was used but the test did not provide it`);
}

const refuseAll = new Proxy({}, { get: (_target, key) => () => unused(String(key)) });

/** Builds a context; `namespace` fields override a namespace that allows nothing. */
export function testToolContext(
  overrides: Partial<Omit<ToolContext, "namespace">> & {
    namespace?: Partial<NamespaceConfig>;
  } = {},
): ToolContext {
  const { namespace, ...rest } = overrides;
  return {
    tenantId: "t1",
    taskId: "task1",
    branch: "main",
    idempotencyKey: "idem-task1-main-c0",
    goal: null,
    responseFormat: {},
    llm: refuseAll as ToolContext["llm"],
    sandbox: refuseAll as ToolContext["sandbox"],
    blobs: refuseAll as ToolContext["blobs"],
    blobPrefix: "t/t1/task1",
    outbound: CLOSED_POLICY,
    ...rest,
    namespace: {
      name: "default",
      allowed_tools: [],
      allowed_hosts: [],
      description: "",
      code_tools: [],
      http_tools: [],
      mcp_servers: [],
      ...namespace,
    },
  };
}
