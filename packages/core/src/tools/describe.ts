/**
 * What the planner's prompts and `GET /v1/tools` show of a tool. Apart from the
 * registry because it loads zod's JSON Schema generator, which a step needs
 * only when it plans: the planner, the API's routes and the service that adds a
 * namespace's tools import it; a worker's cold start does not.
 */
import * as z from "zod";
import type { ToolDescription } from "./registry";
import type { Tool } from "./tool";

/**
 * Describes a tool, with its input schema as JSON Schema: the author's own for
 * tools defined by one, else generated from the zod schema.
 *
 * @example
 * describeTool(builtinTools().get("llm_generate")!).input_schema.required // ["prompt"]
 */
export function describeTool(tool: Tool): ToolDescription {
  const source = tool.source ?? "builtin";
  if (tool.inputSchema) {
    return {
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
      source,
    };
  }
  // io "input": describe what the planner writes (fields with defaults are optional).
  const { $schema: _, ...schema } = z.toJSONSchema(tool.input, {
    io: "input",
    unrepresentable: "any",
  });
  return { name: tool.name, description: tool.description, input_schema: schema, source };
}
