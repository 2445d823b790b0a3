/**
 * Lambda entry of the API: the Hono app behind a function URL with response
 * streaming (the events endpoint streams Server-Sent Events; see infra/api.ts).
 */
import { createApp } from "@stackvm/api";
import { streamHandle } from "hono/aws-lambda";
import { awsSystem } from "./aws-system";

const runtime = awsSystem();

export const handler = streamHandle(createApp(runtime.system.api));
