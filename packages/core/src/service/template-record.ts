/**
 * A template as the API answers it: apart from `templates.ts`, so that the
 * worker, which builds the template service on first use, does not load the
 * service with the API's schema.
 */
import * as z from "zod";
import { buildOnce } from "../build-once";

/** A template as clients see it (built on first use: only the API's routes answer with it). */
export const Template = buildOnce(() =>
  z.object({
    template_id: z.string(),
    namespace: z.string(),
    goal: z.string(),
    plan: z.array(z.unknown()),
    task_id: z.string(),
    commit_id: z.string(),
    created_at: z.string(),
  }),
);
export type Template = z.infer<ReturnType<typeof Template>>;
