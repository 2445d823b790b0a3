import { beforeAll, describe, expect, it } from "vitest";
import { classifyFailure } from "../errors";
import { loadJsonSchemaCompiler } from "../json-schema/compile";
import { MemoryBlobs } from "../testing/memory/memory-blobs";
import { failed, ok, scriptedSandbox } from "../testing/sandbox-fakes";
import { testToolContext } from "../testing/tool-context";
import { checkSandboxCode } from "./code-check";
import { codeTool } from "./code-tool";
import { describeTool } from "./describe";

beforeAll(loadJsonSchemaCompiler);

const definition = {
  name: "average",
  description: "The average of numbers",
  input_schema: {
    type: "object",
    properties: { numbers: { type: "array", items: { type: "number" }, minItems: 1 } },
    required: ["numbers"],
    additionalProperties: false,
  },
  language: "python" as const,
  code: "sum(numbers) / len(numbers)",
};

describe("codeTool", () => {
  it("runs the saved code with the tool input as its inputs", async () => {
    const sandbox = scriptedSandbox([ok(2)]);
    const tool = codeTool(definition);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });

    const { value, details } = await tool.run(tool.input.parse({ numbers: [1, 2, 3] }), context);

    expect(value).toBe(2);
    expect(sandbox.requests[0]).toMatchObject({
      language: "python",
      code: definition.code,
      inputs: { numbers: [1, 2, 3] },
    });
    expect(details?.sandbox).toMatchObject({ language: "python", error: null });
  });

  it("takes a stored record, whose keys and dates are not part of the definition", async () => {
    const sandbox = scriptedSandbox([ok(2)]);
    const record = {
      ...definition,
      pk: "T#t1",
      sk: "NSTOOL#default#average",
      created_at: "2026-01-01",
    };
    const tool = codeTool(record);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    expect((await tool.run({ numbers: [2] }, context)).value).toBe(2);
  });

  it("checks the input against its JSON Schema", () => {
    const tool = codeTool(definition);
    expect(tool.input.safeParse({ numbers: [] }).success).toBe(false);
    expect(tool.input.safeParse({ numbers: [1], extra: 1 }).success).toBe(false);
    expect(describeTool(tool).input_schema).toMatchObject({ required: ["numbers"] });
  });

  it("fails the step with the sandbox's error", async () => {
    const sandbox = scriptedSandbox([
      failed("runtime_error", "ZeroDivisionError: division by zero"),
    ]);
    const context = testToolContext({ sandbox: sandbox.port, blobs: new MemoryBlobs() });
    const error = await codeTool(definition)
      .run({ numbers: [1] }, context)
      .catch((e: unknown) => e);
    expect(classifyFailure(error)).toMatchObject({
      action: "record",
      code: "sandbox_runtime_error",
      message: expect.stringContaining("code tool 'average'"),
    });
  });

  it.each([
    ["a bad name", { name: "Average Tool" }, /a tool name is/],
    [
      "an input schema that is not an object",
      { input_schema: { type: "string" } },
      /JSON Schema of an object/,
    ],
    ["an unknown language", { language: "ruby" }, /language/],
  ])("refuses %s", (_, change, message) => {
    expect(() => codeTool({ ...definition, ...change } as typeof definition)).toThrow(message);
  });
});

describe("checkSandboxCode", () => {
  it.each([
    ["python", "import scipy.stats\nscipy.stats.tmean(x)", /scipy is not installed/],
    ["python", "from requests import get", /no network/],
    ["python", "import os, subprocess", /cannot start processes/],
    ["python", "import os\nos.system('ls')", /cannot start processes/],
    ["javascript", "const fs = require('fs')", /require/],
    ["javascript", "import fs from 'fs'", /import/],
    ["javascript", "await fetch('https://example.com')", /no network/],
    ["javascript", "setTimeout(() => 1, 10)", /no timers/],
    ["javascript", "process.env.HOME", /process/],
  ] as const)("refuses %s code: %s", (language, code, problem) => {
    expect(checkSandboxCode(language, code).join("\n")).toMatch(problem);
  });

  it.each([
    [
      "python",
      "import statistics, json\n# import numpy would be nice\nprint('import socket')\nstatistics.mean(x)",
    ],
    [
      "javascript",
      "// require('fs') is not here\nconst s = 'process.env'; const fetched = [1].map((n) => n * 2); fetched",
    ],
  ] as const)(
    "accepts %s code that only mentions forbidden names in comments and strings",
    (language, code) => {
      expect(checkSandboxCode(language, code)).toEqual([]);
    },
  );

  it.each([
    ["import pandas as pd\npd.DataFrame(rows).groupby('a').mean()"],
    ["import numpy as np\nnp.mean(x)"],
    ["import matplotlib.pyplot as plt\nplt.plot(x)\nplt.savefig('chart.png')"],
    ["from openpyxl import Workbook\nWorkbook().save('out.xlsx')"],
  ] as const)("accepts Python that uses the data engine's libraries: %s", (code) => {
    expect(checkSandboxCode("python", code)).toEqual([]);
  });

  it.each([
    [
      "python",
      "import statistics, json\n# import socket would be nice\nprint('import socket')\nstatistics.mean(x)",
    ],
  ] as const)(
    "still accepts %s code that mentions a refused module only in a comment and a string",
    (language, code) => {
      expect(checkSandboxCode(language, code)).toEqual([]);
    },
  );
});
