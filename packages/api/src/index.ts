/** @stackvm/api: the HTTP API as a Hono app. */
export { createApp } from "./app";
export type { ApiConfig, ApiDeps, DoctorCheck, DoctorRun } from "./deps";
export type { ApiApp, ApiEnv } from "./env";
