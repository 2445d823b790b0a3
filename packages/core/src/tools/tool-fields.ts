/**
 * The fields that every tool a namespace defines has (code tools and HTTP tools
 * alike): its name, which plans call it by, and its description, which the
 * planner reads.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";

/** A tool's name as a plan calls it. */
export const ToolNameField = buildOnce(() =>
  z
    .string()
    .regex(
      /^[a-z][a-z0-9_]{0,63}$/,
      "a tool name is 1 to 64 of a-z, 0-9 and _, starting with a letter",
    ),
);

/** What the tool does, for the planner. */
export const ToolDescriptionField = buildOnce(() =>
  z.string().min(1, "describe what the tool does, for the planner").max(2_000),
);
