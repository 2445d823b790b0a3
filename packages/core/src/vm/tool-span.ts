/**
 * The attributes of a tool call's span (`execute_tool {name}`), per
 * OpenTelemetry's GenAI conventions, with MCP's where the tool is an MCP
 * server's (`server.tool`), and what Langfuse and LangSmith read to type it.
 */
import type { SpanAttributes } from "../ports/tracer";
import type { ToolContext } from "../tools/tool";

export function toolSpan(name: string, context: ToolContext): SpanAttributes {
  const dot = name.indexOf(".");
  const server = dot > 0 ? name.slice(0, dot) : null;
  const mcp = server !== null && context.namespace.mcp_servers.includes(server);
  return {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.type": mcp ? "extension" : "function",
    "gen_ai.tool.call.id": context.idempotencyKey,
    "gen_ai.conversation.id": context.taskId,
    ...(mcp
      ? {
          "mcp.method.name": "tools/call",
          "mcp.server.name": server ?? undefined,
          "gen_ai.tool.name": name.slice(dot + 1),
        }
      : {}),
    "langfuse.observation.type": "tool",
    "langsmith.span.kind": "tool",
  };
}
