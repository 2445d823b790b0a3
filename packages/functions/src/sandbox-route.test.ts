import type { SandboxPort } from "@stackvm/core";
import {
  DEFAULT_SANDBOX_LIMITS,
  type SandboxRequest,
  type SandboxResponse,
} from "@stackvm/core/sandbox-protocol";
import { describe, expect, it } from "vitest";
import { routeSandbox } from "./sandbox-route";

/** A sandbox port that records which function got which request. */
function recording(name: string, calls: string[]): SandboxPort {
  return {
    async run(request: SandboxRequest): Promise<SandboxResponse> {
      calls.push(`${name}: ${request.language} ${request.code.split("\n")[0]}`);
      return {
        v: 1,
        result: name,
        stdout: "",
        stderr: "",
        truncated: false,
        files: [],
        error: null,
        duration_ms: 1,
        limits: DEFAULT_SANDBOX_LIMITS,
      };
    },
  };
}

const pandas: SandboxRequest = {
  v: 1,
  language: "python",
  code: "import pandas as pd\npd.DataFrame({'a': [1]}).sum()",
};
const plain: SandboxRequest = { v: 1, language: "python", code: "import json\njson.dumps(1)" };
const javascript: SandboxRequest = { v: 1, language: "javascript", code: "1 + 1" };

describe("the worker's sandbox route on AWS", () => {
  it("sends Python that imports a data library to the data function, the rest to the sandbox", async () => {
    const calls: string[] = [];
    const port = routeSandbox(recording("sandbox", calls), recording("data", calls));
    expect((await port.run(pandas)).result).toBe("data");
    expect((await port.run(plain)).result).toBe("sandbox");
    expect((await port.run(javascript)).result).toBe("sandbox");
    // A `from` import at any indentation counts, as it does in the sandbox's own routing.
    expect(
      (
        await port.run({
          v: 1,
          language: "python",
          code: "def f():\n    from matplotlib import pyplot",
        })
      ).result,
    ).toBe("data");
    // JavaScript that mentions pandas is still JavaScript.
    expect((await port.run({ v: 1, language: "javascript", code: "import pandas" })).result).toBe(
      "sandbox",
    );
    expect(calls).toEqual([
      "data: python import pandas as pd",
      "sandbox: python import json",
      "sandbox: javascript 1 + 1",
      "data: python def f():",
      "sandbox: javascript import pandas",
    ]);
  });

  it("sends everything to the sandbox function where no data function is configured (it refuses the data libraries)", async () => {
    const calls: string[] = [];
    const port = routeSandbox(recording("sandbox", calls), null);
    expect((await port.run(pandas)).result).toBe("sandbox");
    expect(calls).toEqual(["sandbox: python import pandas as pd"]);
  });
});
