import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const STYLE = resolve(import.meta.dirname, "style.ts");

/** Runs `script | head -1` in bash, as a user's pipe; head's output, and the writer's stderr and status. */
async function pipedToHead(source: string) {
  const folder = await mkdtemp(join(tmpdir(), "svm-pipe-"));
  try {
    const file = join(folder, "write.ts");
    await writeFile(file, source);
    const command = `"${process.execPath}" --import tsx "${file}" | head -1; echo "status \${PIPESTATUS[0]}" >&2`;
    return await new Promise<{ stdout: string; stderr: string }>((done) =>
      execFile(
        "bash",
        ["-c", command],
        { cwd: resolve(import.meta.dirname, "../../..") },
        (_e, stdout, stderr) => done({ stdout, stderr }),
      ),
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe("createOut", () => {
  it("stops quietly with status 0 when the reader of a pipe closes early (| head -1)", async () => {
    // Far more than a pipe holds: the writer is still writing when head exits.
    const run = await pipedToHead(
      `import { createOut } from ${JSON.stringify(STYLE)};\n` +
        `const out = createOut();\n` +
        `for (let i = 0; i < 5000; i++) out.line(\`line \${i} \`.padEnd(80, "."));\n`,
    );
    expect(run.stdout).toMatch(/^line 0 \.+\n$/);
    expect(run.stderr).not.toContain("EPIPE");
    expect(run.stderr.trim()).toBe("status 0");
  });
});
