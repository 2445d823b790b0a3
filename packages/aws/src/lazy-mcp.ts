/**
 * The MCP client for the Lambda entries: the SDK is imported on the first MCP
 * call, so that no function's cold start loads it (see lambda.ts).
 */
import type { McpClient } from "@stackvm/core";

/** An MCP client that loads `SdkMcpClient` when first used. */
export function lazyMcpClient(): McpClient {
  let client: Promise<McpClient> | undefined;
  const get = () => {
    client ??= import("./mcp-client").then((m) => new m.SdkMcpClient());
    return client;
  };
  return {
    listTools: async (connection) => (await get()).listTools(connection),
    callTool: async (connection, tool, args) => (await get()).callTool(connection, tool, args),
  };
}
