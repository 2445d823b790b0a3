/**
 * Lambda entry of the API: the Hono app behind a function URL with response
 * streaming (the events endpoint streams Server-Sent Events; see infra/api.ts).
 */
import { createApp } from "@stackvm/api";
import { streamHandle } from "hono/aws-lambda";
import { awsRuntime } from "./aws-runtime";

const runtime = awsRuntime();

export const handler = streamHandle(createApp(runtime.system.api));
