/**
 * What a function's cold start loads, on the bundles SST builds (esbuild with
 * code splitting, scripts/bundles.ts): the clients that most invocations never
 * call stay in chunks loaded on first use, yet are still in the bundle, so the
 * first call that needs one finds it. `npm run bundle` measures the times.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Bundle, bundle, entries, requestsOnce } from "../../scripts/bundles";
import { lazyPortModules, lazyRouteModules } from "../support/lazy-declarations";
import { projectRoot } from "./sst-harness";

const built: Record<string, Bundle> = {};

beforeAll(async () => {
  for (const name of ["api", "worker", "sweep"]) {
    const entry = entries.find((e) => e.name === name);
    if (!entry) throw new Error(`no function named ${name} in scripts/bundles.ts`);
    built[name] = await bundle(
      `test-${name}`,
      { entryPoints: [join(projectRoot, entry.file)], write: false },
      entry.external,
    );
  }
}, 120_000);

/** The inputs of a function's cold start that match `pattern`. */
const atStart = (name: string, pattern: RegExp) =>
  (built[name]?.eagerInputs ?? []).filter((input) => pattern.test(input));
const inBundle = (name: string, pattern: RegExp) =>
  (built[name]?.allInputs ?? []).some((input) => pattern.test(input));

const s3 = /node_modules\/@aws-sdk\/client-s3\//;
const scheduler = /node_modules\/@aws-sdk\/client-scheduler\//;
const openai = /node_modules\/openai\//;
const lambda = /node_modules\/@aws-sdk\/client-lambda\//;
const consoleScript = /packages\/web\/src\/generated\/console-bundle/;
const cronParsing = /node_modules\/(cron-parser|luxon)\//;
const zodLocales = /node_modules\/zod\/v4\/locales\/(?!en\.js)/;
const mcpSdk = /node_modules\/@modelcontextprotocol\/sdk\//;

describe("a function's cold start", () => {
  it("does not load the S3 client in any function, which still carries it for large values", () => {
    for (const name of ["api", "worker", "sweep"]) {
      expect(atStart(name, s3), name).toEqual([]);
      expect(inBundle(name, s3), name).toBe(true);
    }
  });

  it("does not load the API's schedule client or console script, which load on their routes", () => {
    expect(atStart("api", scheduler)).toEqual([]);
    expect(atStart("api", consoleScript)).toEqual([]);
    expect(inBundle("api", scheduler)).toBe(true);
    expect(inBundle("api", consoleScript)).toBe(true);
  });

  it("does not load the MCP SDK in the API, whose server loads with the first POST /mcp", () => {
    expect(atStart("api", mcpSdk)).toEqual([]);
    expect(inBundle("api", mcpSdk)).toBe(true);
  });

  it("does not load the worker's OpenAI and Lambda clients, which load with the first LLM or code step", () => {
    expect(atStart("worker", openai)).toEqual([]);
    expect(atStart("worker", lambda)).toEqual([]);
    expect(inBundle("worker", openai)).toBe(true);
    expect(inBundle("worker", lambda)).toBe(true);
  });

  it("loads cron-parser and luxon with the first cron read, not at any function's start", () => {
    for (const name of ["api", "worker", "sweep"]) {
      expect(atStart(name, cronParsing), name).toEqual([]);
    }
    expect(inBundle("api", cronParsing)).toBe(true);
  });

  it("builds none of the API's schemas at the worker's start, nor the protocols it reads on first use", () => {
    // The step path reads plain values (model-values.ts, plan/plan-values.ts,
    // sandbox/files.ts, knowledge/ingest-message.ts) and builds its tools'
    // inputs on first use; the API's records, the plan language's schemas and
    // the sandbox's and knowledge's protocols stay out of its start.
    const apiOnly =
      /packages\/core\/src\/(model\.ts|plan\/schema\.ts|sandbox\/protocol\.ts|knowledge\/(model|protocol)\.ts|service\/namespace-input\.ts)$/;
    expect(atStart("worker", apiOnly)).toEqual([]);
    // The worker builds the step system alone (`awsStepSystem`): what only the
    // whole system builds (the API's services, knowledge's own) is not even in
    // its bundle, though system.ts, which holds both assemblies, is.
    const wholeOnly =
      /packages\/(functions\/src\/knowledge\.ts|core\/src\/wiring\/api-services\.ts|core\/src\/knowledge\/ingest\.ts)$/;
    expect(inBundle("worker", wholeOnly)).toBe(false);
    expect(inBundle("worker", /packages\/functions\/src\/system\.ts$/)).toBe(true);
    expect(inBundle("api", wholeOnly)).toBe(true);
    expect(inBundle("worker", /packages\/core\/src\/sandbox\/protocol\.ts$/)).toBe(true);
  });

  it("registers the API's routes at start but loads each group's code, and builds its schemas, on the group's first request", () => {
    // routes/ui.ts only mounts the console, whose own script loads on its page; each
    // routes/*.paths.ts is the tiny declaration the start routes by (route-declaration.ts).
    expect(atStart("api", /packages\/api\/src\/routes\/(?!ui\.ts$)(?![\w-]+\.paths\.ts$)/)).toEqual(
      [],
    );
    expect(
      atStart("api", /packages\/api\/src\/(openapi-document|openai\/schemas|schemas)\.ts$/),
    ).toEqual([]);
    const recordsAndPlans =
      /packages\/core\/src\/(model\.ts|plan\/schema\.ts|sandbox\/protocol\.ts|service\/(namespace|schedule|fork)-input\.ts)$/;
    expect(atStart("api", recordsAndPlans)).toEqual([]);
    expect(inBundle("api", /packages\/api\/src\/routes\/tasks\.ts$/)).toBe(true);
    expect(inBundle("api", /packages\/core\/src\/model\.ts$/)).toBe(true);
  });

  it("keeps every module that any code imports on first use out of each start", () => {
    // Read from the bundle's own import graph: a module some code loads with
    // import() lands in the start when anything on the start path imports it too,
    // a re-export nobody reads included (docs/deploy.md, "Cold starts").
    for (const name of ["api", "worker", "sweep"]) {
      const lazy = built[name]?.lazyInputs ?? [];
      expect(lazy.length, name).toBeGreaterThan(10);
      const eager = new Set(built[name]?.eagerInputs);
      expect(
        lazy.filter((input) => eager.has(input)),
        name,
      ).toEqual([]);
    }
  });

  it("keeps every module a lazy port declares out of each start that carries it", () => {
    // Read from the lazyPort(...) calls themselves (test/support/lazy-declarations.ts):
    // a lazy adapter or service added later is checked as soon as it is declared.
    const modules = lazyPortModules();
    expect(modules).toContain("packages/aws/src/s3-blobs.ts");
    expect(modules).toContain("packages/core/src/planning/planner.ts");
    for (const name of ["api", "worker", "sweep"]) {
      const inputs = new Set(built[name]?.allInputs);
      const carried = modules.filter((module) => inputs.has(module));
      expect(carried.length, name).toBeGreaterThan(0);
      const eager = new Set(built[name]?.eagerInputs);
      expect(
        carried.filter((module) => eager.has(module)),
        name,
      ).toEqual([]);
    }
  });

  it("loads each route group's file, from route-groups.ts, on its first request and not at the API's start", () => {
    const files = lazyRouteModules();
    expect(files.length).toBeGreaterThan(20);
    const eager = new Set(built.api?.eagerInputs);
    const inputs = new Set(built.api?.allInputs);
    expect(files.filter((file) => eager.has(file))).toEqual([]);
    expect(files.filter((file) => !inputs.has(file))).toEqual([]);
  });

  it("answers from the built API in a fresh process: a task's start, then the OpenAPI document, which loads every group", async () => {
    // Bundled like the API (scripts/api-request-probe.ts): each group of routes a
    // chunk of its own, evaluated in the order a bundle's chunks give, not the
    // order the sources import in.
    const api = entries.find((e) => e.name === "api");
    const probe = await bundle(
      "test-api-request-probe",
      { entryPoints: [join(projectRoot, "scripts/api-request-probe.ts")] },
      api?.external,
    );
    const first = requestsOnce(probe.entry);
    expect(first).toMatchObject({ startTaskMs: expect.any(Number), openapiMs: expect.any(Number) });
  }, 120_000);

  it("keeps the protocols of the clients loaded on first use out of every start (their own copy of the SDK)", () => {
    const xml = /@aws-sdk\/core\/dist-es\/submodules\/protocols\/xml|@aws-sdk\/xml-builder/;
    for (const name of ["api", "worker", "sweep"]) {
      expect(atStart(name, xml), name).toEqual([]);
      expect(inBundle(name, xml), name).toBe(true);
    }
  });

  it("leaves the worker's clients out of the other functions' bundles", () => {
    for (const name of ["api", "sweep"]) {
      expect(inBundle(name, openai), name).toBe(false);
      expect(inBundle(name, lambda), name).toBe(false);
    }
  });

  it("carries none of zod's translations but English, in any function", () => {
    // `import { z } from "zod"` makes the bundler keep zod's whole namespace,
    // 260 KB of it messages in 50 languages; `import * as z` lets it drop them.
    // @hono/zod-openapi reads that namespace, so the API needs the plugin of
    // infra/esbuild-plugins.mjs, which maps the translations to English alone.
    for (const name of ["api", "worker", "sweep"]) {
      expect(inBundle(name, zodLocales), name).toBe(false);
      expect(inBundle(name, /node_modules\/zod\/v4\/classic\//), name).toBe(true);
    }
  });

  it("loads less at start than the whole bundle, within the size target", () => {
    for (const name of ["api", "worker"]) {
      const b = built[name];
      expect(b?.eagerBytes).toBeLessThan(b?.bytes ?? 0);
      // The whole bundle, chunks loaded on first use included: the MCP client and
      // JSON Schema validation of tool sources (issue 14) took the API from 1.4 to
      // 1.8 MB; Ajv with RE2 for tenants' schemas, HTML reading and the OpenAI-compatible
      // routes (issues 26 and 30) to 2.03 MiB; the spreadsheet reader (exceljs, with the
      // first .xlsx), the page reader of web_fetch (linkedom, Readability, Turndown, with
      // its first page) and the MCP server (with the first POST /mcp) to 4.07 MiB (issues
      // 40 and 41), each a chunk loaded on first use. What a cold start loads is the eager
      // part, checked above; the whole stays far inside Lambda's 250 MB.
      expect(b?.bytes).toBeLessThan(4.5 * 1024 * 1024);
    }
  });
});
