/**
 * Files by reference through the whole local stack: a tenant uploads a
 * spreadsheet and a CSV (`POST /v1/files`), a goal over them is planned by the
 * scripted LLM, and the step's `files` names them by reference; the worker
 * reads the bytes from the blob store and hands them to the local sandbox
 * process (Pyodide), which has no network. A 20 MiB file goes the same way
 * (presigned PUT straight to the S3 emulator); a file a step writes is passed
 * to the next step by reference. Hostile uploads and references get a clear
 * 4xx (or fail their step) and leave nothing behind.
 */
import { createHash, randomBytes } from "node:crypto";
import { LocalSandbox } from "@stackvm/local";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makeXlsx, presignedFile, uploadFile, XLSX_TYPE } from "../support/files";
import { ADMIN_KEY, startTestStack, type TestStack } from "../support/stack";

let t: TestStack;
let sandbox: LocalSandbox;
let other: string;

beforeAll(async () => {
  sandbox = new LocalSandbox({ ceiling: { time_ms: 20_000, memory_mib: 1024 }, log: () => {} });
  await sandbox.run({ v: 1, language: "python", code: "1" });
  t = await startTestStack({
    sandbox,
    visibilityTimeoutSeconds: 60,
    env: { STACKVM_MAX_PLAN_UPDATES: "0", STACKVM_KNOWLEDGE_MAX_UPLOAD_BYTES: String(1 << 20) },
  });
  other = (
    await t.api("POST", "/v1/admin/tenants/intruder/keys", { name: "b" }, { key: ADMIN_KEY })
  ).body.key;
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await sandbox?.close();
});

beforeEach(() => t.llm.reset());

/** The three largest values of column B of the first sheet, with Python's standard library only. */
const XLSX_TOP3 = `import zipfile, re, xml.etree.ElementTree as ET
M = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
book = zipfile.ZipFile("numbers.xlsx")
sheet = ET.fromstring(book.read("xl/worksheets/sheet1.xml"))
values = []
for cell in sheet.iter(M + "c"):
    v = cell.find(M + "v")
    if re.match(r"B\\d+$", cell.get("r")) and v is not None and cell.get("t") in (None, "n"):
        values.append(float(v.text))
result = sorted(values, reverse=True)[:3]`;

const CSV_TOP3 = `import csv
rows = list(csv.reader(open("numbers.csv", newline="")))
result = sorted((float(r[1]) for r in rows[1:] if len(r) > 1 and r[1].strip()), reverse=True)[:3]`;

const runCode = (seq: number, params: Record<string, unknown>, out: string) => ({
  seq_no: seq,
  type: "calling",
  parameters: {
    tool_name: "run_code",
    tool_params: { language: "python", ...params },
    output_vars: out,
  },
});
const finish = (seq: number, value: unknown) => ({
  seq_no: seq,
  type: "assign",
  parameters: { final_answer: value },
});

async function start(body: Record<string, unknown>, key?: string) {
  const created = await t.api("POST", "/v1/tasks", body, key ? { key } : undefined);
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return t.waitForTask(created.body.task_id, { timeoutMs: 90_000, ...(key ? { key } : {}) });
}

async function commitsOf(taskId: string) {
  const res = await t.api("GET", `/v1/tasks/${taskId}/branches/main/commits?limit=100`);
  return (res.body.commits as Array<Record<string, any>>).reverse();
}

const ROWS: Array<[string, number]> = [
  ["apples", 12],
  ["pears", 40.5],
  ["plums", 7],
  ["figs", 99],
  ["kiwis", 63],
];

describe("a goal over an uploaded spreadsheet and CSV", () => {
  it("answers the three largest values of the second column, the files reaching the sandbox by reference", async () => {
    const xlsx = await uploadFile(t, {
      name: "numbers.xlsx",
      type: XLSX_TYPE,
      bytes: await makeXlsx(["fruit", "count"], ROWS),
    });
    expect(xlsx.status, JSON.stringify(xlsx.body)).toBe(201);
    expect(xlsx.body).toMatchObject({
      filename: "numbers.xlsx",
      content_type: XLSX_TYPE,
      status: "ready",
    });
    const csv = await uploadFile(t, {
      name: "numbers.csv",
      type: "text/csv",
      bytes: `fruit,count\n${ROWS.map((r) => r.join(",")).join("\n")}\n`,
    });
    expect(csv.status).toBe(201);
    t.llm.queue("plan", {
      reasoning: "read both files in the sandbox",
      plan: [
        runCode(0, { code: XLSX_TOP3, files: ["${sheet}"] }, "from_xlsx"),
        runCode(1, { code: CSV_TOP3, files: ["${table}"] }, "from_csv"),
        finish(2, { xlsx: "${from_xlsx}", csv: "${from_csv}" }),
      ],
    });

    const task = await start({
      goal: "What are the three largest values in this spreadsheet's second column?",
      inputs: { sheet: { $file: xlsx.body.file_id }, table: { $file: csv.body.file_id } },
    });

    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer).toEqual({ xlsx: [99, 63, 40.5], csv: [99, 63, 40.5] });
    // The planner saw the files as references, described, not their bytes.
    const planned = t.llm.requests.find((r) => r.schemaName === "plan")!;
    const prompt = planned.messages.map((m) => m.content).join("\n");
    expect(prompt).toContain(xlsx.body.file_id);
    expect(prompt).toContain("numbers.xlsx");
    // The commit holds the reference, never the bytes.
    const first = (await commitsOf(task.task_id)).find((c) => c.seq_no === 0)!;
    expect(first.instruction.parameters.tool_params.files).toEqual(["${sheet}"]);
    expect(JSON.stringify(first)).not.toContain("UEsDB"); // a zip's first bytes, in base64
  });
});

describe("an uploaded spreadsheet read with pandas", () => {
  it("reaches the data engine by reference, and pandas with openpyxl reads it", async () => {
    const xlsx = await uploadFile(t, {
      name: "numbers.xlsx",
      type: XLSX_TYPE,
      bytes: await makeXlsx(["fruit", "count"], ROWS),
    });
    expect(xlsx.status, JSON.stringify(xlsx.body)).toBe(201);
    t.llm.queue("plan", {
      reasoning: "read the sheet with pandas",
      plan: [
        runCode(
          0,
          {
            code: "import pandas as pd\ndf = pd.read_excel('numbers.xlsx')\nresult = df.iloc[:, 1].nlargest(3).tolist()",
            files: ["${sheet}"],
          },
          "top",
        ),
        finish(1, "${top}"),
      ],
    });

    const task = await start({
      goal: "What are the three largest values in this spreadsheet's second column?",
      inputs: { sheet: { $file: xlsx.body.file_id } },
    });

    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer).toEqual([99, 63, 40.5]);
  });
});

describe("a large file", () => {
  it("passes 20 MiB of binary through a presigned upload to the sandbox, byte for byte", async () => {
    const bytes = randomBytes(20 * 1024 * 1024);
    const file = await presignedFile(t, {
      name: "big.bin",
      type: "application/octet-stream",
      bytes,
    });
    expect(file).toMatchObject({ status: "ready", size: bytes.byteLength });
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(file.sha256).toBe(sha);

    const task = await start({
      plan: [
        runCode(
          0,
          {
            code: 'import hashlib\ndata = open("big.bin", "rb").read()\nresult = [len(data), hashlib.sha256(data).hexdigest()]',
            files: [{ $file: file.file_id }],
          },
          "seen",
        ),
        finish(1, "${seen}"),
      ],
    });

    expect(task.status, task.error).toBe("completed");
    expect(task.final_answer).toEqual([bytes.byteLength, sha]);
  }, 120_000);
});

describe("a file a step writes", () => {
  it("reaches a later step by reference, without its bytes in a variable", async () => {
    const task = await start({
      plan: [
        runCode(
          0,
          {
            code: 'open("out.bin", "wb").write(bytes(range(256)) * 400)\nresult = 1',
            output: "all",
          },
          "made",
        ),
        runCode(
          1,
          {
            code: 'import hashlib\nd = open("again.bin", "rb").read()\nresult = [len(d), hashlib.sha256(d).hexdigest()]',
            files: [{ path: "again.bin", sha256: "${made.files.0.sha256}" }],
          },
          "first",
        ),
        runCode(
          2,
          { code: 'result = len(open("out.bin", "rb").read())', files: ["${made.files.0}"] },
          "second",
        ),
        finish(3, { first: "${first}", second: "${second}", sha: "${made.files.0.sha256}" }),
      ],
    });

    expect(task.status, task.error).toBe("completed");
    const expected = createHash("sha256")
      .update(Buffer.from(Array.from({ length: 256 * 400 }, (_, i) => i % 256)))
      .digest("hex");
    expect(task.final_answer).toEqual({ first: [102400, expected], second: 102400, sha: expected });
    const made = (await commitsOf(task.task_id)).find((c) => c.seq_no === 0);
    // The variable holds the reference (no text: the file is binary and over 16 KiB).
    expect(made!.outputs.made.files[0]).toMatchObject({
      path: "out.bin",
      size: 102400,
      sha256: expected,
    });
    expect(made!.outputs.made.files[0].text).toBeUndefined();
  });
});

describe("hostile files", () => {
  it("refuses an upload past the tenant's file storage quota with 409, keeps nothing, and counts a delete back", async () => {
    const made = await t.api(
      "POST",
      "/v1/admin/tenants/roomy/keys",
      { name: "r" },
      { key: ADMIN_KEY },
    );
    const key = made.body.key as string;
    const quota = await t.api(
      "PUT",
      "/v1/admin/tenants/roomy/quotas",
      { file_storage_bytes: 1500 },
      { key: ADMIN_KEY },
    );
    expect(quota.status).toBe(200);
    const put = (n: number) =>
      uploadFile(
        t,
        { name: "a.bin", type: "application/octet-stream", bytes: new Uint8Array(n) },
        key,
      );
    const first = await put(1000);
    expect(first.status).toBe(201);
    const refused = await put(600);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("file_storage_full");
    expect(refused.body.error.message).toMatch(/1000 used/);
    expect((await t.api("GET", "/v1/files", undefined, { key })).body.files).toHaveLength(1);
    const report = await t.api("GET", "/v1/admin/tenants/roomy/quotas", undefined, {
      key: ADMIN_KEY,
    });
    expect(report.body.usage.file_bytes).toBe(1000);
    expect(
      (await t.api("DELETE", `/v1/files/${first.body.file_id}`, undefined, { key })).status,
    ).toBe(204);
    expect((await put(600)).status).toBe(201);
  });

  it("refuses an upload over the limit with 413 and keeps nothing", async () => {
    const before = (await t.api("GET", "/v1/files")).body.files.length;
    const res = await uploadFile(t, {
      name: "huge.bin",
      type: "application/octet-stream",
      bytes: new Uint8Array(2 << 20),
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("too_large");
    expect(res.body.error.message).toMatch(/presigned upload/);
    expect((await t.api("GET", "/v1/files")).body.files.length).toBe(before);
  });

  it.each([
    [
      "a body that is not multipart",
      { "content-type": "text/plain" },
      "hello",
      400,
      "malformed_request",
    ],
    [
      "a multipart body with a broken boundary",
      { "content-type": "multipart/form-data; boundary=zzz" },
      "--yyy\r\nnonsense",
      400,
      "malformed_request",
    ],
    [
      "a form without a file part",
      { "content-type": "multipart/form-data; boundary=b" },
      '--b\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--b--\r\n',
      400,
      "malformed_request",
    ],
  ])("refuses %s", async (_what, headers, raw, status, code) => {
    const res = await t.api("POST", "/v1/files", undefined, { headers, raw });
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });

  it.each([
    [
      "a content type that is none",
      { filename: "a.csv", content_type: "not a type" },
      422,
      "invalid_content_type",
    ],
    [
      "a file name of a path only",
      { filename: "../", content_type: "text/csv" },
      422,
      "invalid_filename",
    ],
    ["a field of the wrong type", { filename: 42 }, 400, "malformed_request"],
    ["an unknown field", { filename: "a.csv", size: 5 }, 400, "malformed_request"],
  ])("refuses a presign request with %s", async (_what, body, status, code) => {
    const res = await t.api("POST", "/v1/files", body);
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error.code).toBe(code);
  });

  it("refuses an empty file", async () => {
    const res = await uploadFile(t, { name: "empty.csv", type: "text/csv", bytes: "" });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("file_empty");
  });

  it("answers 404 for another tenant's file, and never lists it", async () => {
    const mine = await uploadFile(t, { name: "secret.csv", type: "text/csv", bytes: "a,b\n1,2\n" });
    const id = mine.body.file_id;
    for (const [method, path] of [
      ["GET", `/v1/files/${id}`],
      ["GET", `/v1/files/${id}/content`],
      ["DELETE", `/v1/files/${id}`],
    ] as const) {
      const res = await t.api(method, path, undefined, { key: other });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const listed = await t.api("GET", "/v1/files", undefined, { key: other });
    expect(listed.body.files.map((f: any) => f.file_id)).not.toContain(id);
    // Still there for its owner, bytes and all.
    const content = await fetch(`${t.url}/v1/files/${id}/content`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    expect(content.status).toBe(200);
    expect(await content.text()).toBe("a,b\n1,2\n");
  });

  it("refuses a task whose input names another tenant's file, or a deleted one", async () => {
    const mine = await uploadFile(t, { name: "mine.csv", type: "text/csv", bytes: "x\n1\n" });
    const plan = [finish(0, "done")];
    const theirs = await t.api(
      "POST",
      "/v1/tasks",
      { plan, inputs: { f: { $file: mine.body.file_id } } },
      { key: other },
    );
    expect(theirs.status).toBe(422);
    expect(theirs.body.error.code).toBe("file_not_found");

    expect((await t.api("DELETE", `/v1/files/${mine.body.file_id}`)).status).toBe(204);
    const gone = await t.api("POST", "/v1/tasks", {
      plan,
      inputs: { f: { $file: mine.body.file_id } },
    });
    expect(gone.status).toBe(422);
    expect(gone.body.error.code).toBe("file_not_found");
    expect((await t.api("GET", `/v1/files/${mine.body.file_id}`)).status).toBe(404);

    const odd = await t.api("POST", "/v1/tasks", { plan, inputs: { f: { $file: 7 } } });
    expect(odd.status).toBe(422);
    expect(odd.body.error.code).toBe("invalid_file_reference");
  });

  it("fails the step of a reference to a deleted file, another tenant's, or a blob of another task", async () => {
    const mine = await uploadFile(t, { name: "gone.csv", type: "text/csv", bytes: "x\n1\n" });
    await t.api("DELETE", `/v1/files/${mine.body.file_id}`);
    const theirs = await uploadFile(
      t,
      { name: "theirs.csv", type: "text/csv", bytes: "y\n2\n" },
      other,
    );
    for (const files of [
      [{ $file: mine.body.file_id }],
      [{ $file: theirs.body.file_id }],
      [{ path: "x.csv", sha256: theirs.body.sha256 }],
    ]) {
      const task = await start({
        plan: [runCode(0, { code: "result = 1", files }, "r"), finish(1, "${r}")],
      });
      expect(task.status, JSON.stringify(files)).toBe("failed");
      expect(task.error).toMatch(/does not exist|no file with sha256/);
    }
  });
});
