/**
 * The MCP client for the Lambda entries: the SDK is imported on the first MCP
 * call, so that no function's cold start loads it (see lambda.ts).
 */
import { lazyPort, type McpClient } from "@stackvm/core";

/** An MCP client that loads `SdkMcpClient` when first used. */
export function lazyMcpClient(): McpClient {
  return lazyPort<McpClient>(async () => new (await import("./mcp-client")).SdkMcpClient());
}
