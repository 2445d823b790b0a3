/**
 * The sizing half of an LLM port (its context and its token count), passed on
 * as it is by a wrapper that changes only `complete`: the tracing front and the
 * tracer both wrap a port this way.
 */
import type { LlmPort } from "@stackvm/core";

/** `port`'s `contextTokens` and `countTokens`, where it has them, bound to it. */
export function sizingOf(port: LlmPort): Pick<LlmPort, "contextTokens" | "countTokens"> {
  return {
    ...(port.contextTokens ? { contextTokens: port.contextTokens.bind(port) } : {}),
    ...(port.countTokens ? { countTokens: port.countTokens.bind(port) } : {}),
  };
}
