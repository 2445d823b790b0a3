/**
 * The ports a system may be built without, as stand-ins that answer why: a
 * feature that is not configured refuses with a reason that says what to set,
 * instead of failing on an undefined port.
 */
import { StackVMError } from "../errors";
import type { SchedulerPort } from "../ports/scheduler";
import type { SecretBox } from "../ports/secrets";
import type { McpClient } from "../tools/sources/mcp-shapes";

/** Where no secret box is configured: secret headers are refused, saying what to set. */
export const noSecrets: SecretBox = {
  async seal() {
    throw new StackVMError(
      "invalid",
      "secrets_unavailable",
      "secret headers cannot be stored here: no key for secrets at rest is configured (STACKVM_TOOL_SECRETS_KMS_KEY, a KMS key, or STACKVM_TOOL_SECRETS_KEY, 32 bytes in base64)",
    );
  },
  async open() {
    throw new StackVMError("internal", "secrets_unavailable", "no key for secrets at rest");
  },
};

/** Where no MCP client is wired: servers cannot be listed or called. */
export const noMcp: McpClient = {
  async listTools() {
    throw new StackVMError("invalid", "mcp_unavailable", "MCP servers are not available here");
  },
  async callTool() {
    throw new StackVMError("invalid", "mcp_unavailable", "MCP servers are not available here");
  },
};

/** The scheduler port where none is configured: schedules answer why. */
export const noScheduler: SchedulerPort = {
  async put() {
    throw new StackVMError(
      "forbidden",
      "schedules_unavailable",
      "schedules are not configured here: set STACKVM_SCHEDULE_GROUP, STACKVM_SCHEDULER_ROLE_ARN and STACKVM_SCHEDULER_FUNCTION_ARN (infra/schedules.ts does)",
    );
  },
  async delete() {},
};
