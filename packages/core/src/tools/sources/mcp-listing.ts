/**
 * Whether an MCP server's `tools/list` can be taken. The listing is a tool
 * server's input to the shared process, so it is held to the same rules as a
 * tenant's own tools before it is stored: no tool named twice (one server must
 * not break its namespace's routes), and every callable tool's `inputSchema`
 * within the bounds of {@link compileJsonSchema} (no `$ref` cycle, no anyOf chain
 * that doubles at each level, no pattern RE2 cannot run). At registration and
 * refresh a refused listing is a 422 and nothing is stored; on the worker's
 * relist the stored list stands.
 */
import { ValidationError } from "../../errors";
import { compileJsonSchema } from "../../json-schema/compile";
import type { McpServerRecord, McpToolInfo } from "./mcp-shapes";

/**
 * The most tools of one server a namespace may call (as many as an allow list may
 * name). Each distinct schema costs its compile (a few milliseconds, more on a
 * loaded machine) on the request that registers the server: a 1 MiB listing of
 * thousands of tools would hold the API's event loop for many seconds.
 */
export const MAX_MCP_TOOLS = 200;

/** Names a listing gives more than once (a hostile or broken server). */
export function duplicateToolNames(tools: readonly McpToolInfo[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) twice.add(tool.name);
    seen.add(tool.name);
  }
  return [...twice];
}

/** A listing refused for naming a tool twice: 422 at registration and refresh. */
export function duplicateToolError(server: string, names: readonly string[]): ValidationError {
  return new ValidationError(
    "mcp_duplicate_tool",
    `the MCP server '${server}' lists more than one tool named ${names
      .slice(0, 5)
      .map((n) => `'${n}'`)
      .join(
        ", ",
      )}: tool names must be unique within a server; fix the server, then add or refresh it again`,
  );
}

/**
 * Says why a server's listing cannot be stored, or null: `mcp_duplicate_tool`
 * for a name given twice, `mcp_too_many_tools` past {@link MAX_MCP_TOOLS},
 * `invalid_schema` (naming the server, the tool and the problem) for an
 * `inputSchema` out of bounds. Only the tools the server's allow
 * list lets through are compiled: a tenant can leave a broken tool out.
 *
 * @example
 * listingError({ name: "crm", allow: null }, [{ name: "x", description: "", input_schema: { $ref: "#" } }])
 *   // ValidationError invalid_schema: "the inputSchema of the tool 'x' of the MCP server 'crm': … leads back to itself …"
 */
export function listingError(
  record: Pick<McpServerRecord, "name" | "allow">,
  tools: readonly McpToolInfo[],
): ValidationError | null {
  const twice = duplicateToolNames(tools);
  if (twice.length > 0) return duplicateToolError(record.name, twice);
  const callable = tools.filter((t) => record.allow === null || record.allow.includes(t.name));
  if (callable.length > MAX_MCP_TOOLS) {
    return new ValidationError(
      "mcp_too_many_tools",
      `the MCP server '${record.name}' lists ${callable.length} tools; at most ${MAX_MCP_TOOLS} of one server can be used: name the ones the namespace needs in the server's "tools" list`,
      { server: record.name },
    );
  }
  for (const tool of callable) {
    try {
      compileJsonSchema(
        tool.input_schema,
        `the inputSchema of the tool '${tool.name}' of the MCP server '${record.name}'`,
      );
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return new ValidationError(
        "invalid_schema",
        `${error.message}. Fix the tool's inputSchema on the server, or leave the tool out with the server's "tools" list, then add or refresh the server again`,
        { server: record.name, tool: tool.name },
      );
    }
  }
  return null;
}
