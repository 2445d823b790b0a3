/**
 * The one registry of tools and what manages namespaces' tools: built-ins (a
 * built-in family that needs a port, such as knowledge search, is added to the
 * first list), then one source per kind of namespace-owned tool (code, HTTP, MCP).
 */

import type { OutboundPolicy } from "../net/outbound-policy";
import type { Clock } from "../ports/clock";
import type { Log } from "../ports/log";
import { createNamespaces } from "../service/namespaces";
import { ToolSourceService } from "../service/tool-sources";
import type { NamespaceStore } from "../store/namespace-store";
import { codeToolSource } from "../tools/code-tool";
import { knowledgeTools } from "../tools/knowledge";
import { builtinTools } from "../tools/registry";
import { httpToolSource } from "../tools/sources/http-tool";
import { mcpToolSource } from "../tools/sources/mcp";
import { McpCallLimiter } from "../tools/sources/mcp-limits";
import type { Tool } from "../tools/tool";
import { type WebToolsConfig, webTools } from "../tools/web";
import type { WiringPorts } from "./options";
import { noMcp, noSecrets } from "./unconfigured";

/** What the tools are wired from. */
export interface ToolWiring {
  namespaces: NamespaceStore;
  clock: Clock;
  log: Log;
  outbound: OutboundPolicy;
  /** The tenant's webhook secret, which signs its HTTP tools' requests (`WebhookService.secret`). */
  secret: (tenant: string) => Promise<string>;
  /** The operator's search provider and page bounds; none: no provider, the default bounds. */
  web?: WebToolsConfig;
}

/**
 * Builds the built-in tools, the namespaces with their registry, and the
 * service that adds and refreshes HTTP and MCP tools.
 */
export function wireTools(ports: WiringPorts, deps: ToolWiring) {
  const tools: ReadonlyMap<string, Tool> = new Map([
    ...builtinTools(),
    ...(ports.knowledge ? knowledgeTools(ports.knowledge) : []).map(
      (tool) => [tool.name, tool] as const,
    ),
    ...webTools(deps.web).map((tool) => [tool.name, tool] as const),
  ]);
  const secrets = ports.secrets ?? noSecrets;
  const mcp = ports.mcp ?? noMcp;
  const { namespaces, registry } = createNamespaces(deps.namespaces, deps.clock, tools.values(), [
    codeToolSource,
    httpToolSource({ secret: deps.secret, now: deps.clock.now }),
    mcpToolSource({
      client: mcp,
      secrets,
      now: deps.clock.now,
      outbound: deps.outbound,
      // One per process: the local worker's four slots, or one Lambda instance's.
      limiter: new McpCallLimiter(),
      log: deps.log,
      saveTools: (tenant, ns, server, list, at) =>
        toolSources.saveTools(tenant, ns, server, list, at),
    }),
  ]);
  const toolSources = new ToolSourceService({
    namespaces,
    clock: deps.clock,
    secrets,
    mcp,
    outbound: deps.outbound,
    builtinNames: () => registry.builtinNames(),
  });
  return { tools, namespaces, registry, toolSources };
}
