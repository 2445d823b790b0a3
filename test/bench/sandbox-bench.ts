/**
 * The sandbox benchmark (`npm run bench:sandbox`): for each language, the cold
 * start of a new sandbox, the per-run median and p95 of a trivial program, and
 * the speed on a CPU-bound program as a ratio to plain Node / CPython measured in
 * the same run. A script, not a timed test: the numbers go in the issue.
 *
 * Python runs twice: plain (Pyodide) and with pandas (the data engine), whose
 * cold and warm start are printed beside the standard library's.
 *
 * Options: `--runs N` (trivial runs per language, default 30).
 */
import { spawnSync } from "node:child_process";
import { DEFAULT_SANDBOX_LIMITS, type SandboxResponse } from "@stackvm/core/sandbox-protocol";
import { type SandboxConfig, SandboxRunner } from "@stackvm/sandbox";

const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 30;

const config: SandboxConfig = {
  ceiling: { ...DEFAULT_SANDBOX_LIMITS, time_ms: 60_000 },
  network: "namespace",
  allowNetwork: false,
  containment: "bubblewrap",
};
/** The first release's path, for the cost of the OS boundary: no bubblewrap, a network namespace per child. */
const uncontained: SandboxConfig = { ...config, containment: "none", allowUncontained: true };

/** The same CPU-bound work in both languages: naive Fibonacci and a prime sieve, timed inside. */
const CPU_JS_WORK = `
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function primes(limit) {
  const sieve = new Uint8Array(limit + 1); let count = 0;
  for (let i = 2; i <= limit; i++) { if (!sieve[i]) { count++; for (let j = i * i; j <= limit; j += i) sieve[j] = 1; } }
  return count;
}
const started = Date.now();
const answer = [fib(25), primes(2000000)];`;
const CPU_JS = `${CPU_JS_WORK}\n({ ms: Date.now() - started, answer })`;

const CPU_PY = `
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def primes(limit):
    sieve = bytearray(limit + 1)
    count = 0
    for i in range(2, limit + 1):
        if not sieve[i]:
            count += 1
            sieve[i * i :: i] = bytes(len(range(i * i, limit + 1, i)))
    return count
started = time.perf_counter()
answer = [fib(25), primes(2000000)]
result = {"ms": (time.perf_counter() - started) * 1000, "answer": answer}
`;

/** The data engine's trivial run: an import of pandas routes it there, one small frame. */
const PANDAS_TRIVIAL = "import pandas as pd\nint(pd.DataFrame({'a': [1, 2]})['a'].sum())";
/** The same CPU-bound work, in the data engine's CPython, plus a 200,000-row groupby. */
const CPU_PANDAS = `import numpy, pandas as pd\n${CPU_PY}\nframe = pd.DataFrame({"k": numpy.arange(200000) % 7, "v": numpy.arange(200000)})\nresult["groups"] = int(frame.groupby("k")["v"].mean().size)`;

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

function check(answer: SandboxResponse, what: string): SandboxResponse {
  if (answer.error)
    throw new Error(`${what} failed: ${answer.error.code}: ${answer.error.message}`);
  return answer;
}

async function bench(
  language: "javascript" | "python",
  trivial: string,
  cpu: string,
  settings: SandboxConfig = config,
) {
  const coldStart = performance.now();
  const runner = new SandboxRunner(settings, { log: () => {} });
  check(await runner.handle({ v: 1, language, code: trivial }), `${language} cold run`);
  const cold = performance.now() - coldStart;

  // Back to back: each run may wait for the worker or child that the last one left.
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    check(await runner.handle({ v: 1, language, code: trivial }), `${language} trivial run`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  // Warm: runs spaced out as steps are, so the pre-started worker or child is ready.
  const warmTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await runner.warm();
    const started = performance.now();
    check(await runner.handle({ v: 1, language, code: trivial }), `${language} warm run`);
    warmTimes.push(performance.now() - started);
  }
  warmTimes.sort((a, b) => a - b);

  const cpuAnswer = check(
    await runner.handle({ v: 1, language, code: cpu, limits: { time_ms: 60_000 } }),
    `${language} CPU run`,
  );
  await runner.close();
  return {
    cold,
    median: percentile(times, 50),
    p95: percentile(times, 95),
    warmMedian: percentile(warmTimes, 50),
    warmP95: percentile(warmTimes, 95),
    cpuMs: (cpuAnswer.result as { ms: number }).ms,
  };
}

function nodeCpuMs(): number {
  // The same program, compiled by this process's own Node (JIT).
  const run = new Function(`${CPU_JS_WORK}\nreturn Date.now() - started;`) as () => number;
  return Math.min(run(), run(), run());
}

function cpythonCpuMs(): number | null {
  const python = ["python3", "python"].find((name) => spawnSync(name, ["--version"]).status === 0);
  if (!python) return null;
  const out = spawnSync(python, ["-c", `${CPU_PY}\nprint(result["ms"])`], { encoding: "utf8" });
  return out.status === 0 ? Number(out.stdout.trim()) : null;
}

const format = (ms: number) => `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

console.log(`sandbox benchmark: ${RUNS} trivial runs per language, on ${process.version}\n`);
const js = await bench("javascript", "1 + 1", CPU_JS);
const nodeMs = nodeCpuMs();
console.log("JavaScript (QuickJS in WebAssembly, worker thread, fresh instance per run)");
console.log(`  cold start (new sandbox, first run): ${format(js.cold)}`);
console.log(`  trivial run, warm: median ${format(js.warmMedian)}, p95 ${format(js.warmP95)}`);
console.log(`  trivial run, back to back: median ${format(js.median)}, p95 ${format(js.p95)}`);
console.log(
  `  CPU-bound (fib(25) + primes below 2e6): ${format(js.cpuMs)} vs Node ${format(nodeMs)} = ${(js.cpuMs / nodeMs).toFixed(1)}x slower\n`,
);

const py = await bench("python", "1 + 1", CPU_PY);
const data = await bench("python", PANDAS_TRIVIAL, CPU_PANDAS);
const old = await bench("python", "1 + 1", CPU_PY, uncontained);
const cpythonMs = cpythonCpuMs();
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
console.log("Python (Pyodide in a child per run, pre-started, behind bubblewrap)");
console.log(`  cold start (new sandbox with its memory snapshot, first run): ${format(py.cold)}`);
console.log(`  trivial run, warm: median ${format(py.warmMedian)}, p95 ${format(py.warmP95)}`);
console.log(`  trivial run, back to back: median ${format(py.median)}, p95 ${format(py.p95)}`);
console.log(
  cpythonMs === null
    ? `  CPU-bound: ${format(py.cpuMs)} (no CPython on this machine to compare)`
    : `  CPU-bound (fib(25) + primes below 2e6): ${format(py.cpuMs)} vs CPython ${format(cpythonMs)} = ${(py.cpuMs / cpythonMs).toFixed(1)}x slower`,
);
console.log(
  "\nPython with pandas (the data engine: the system's CPython in a child per run, pre-started with the libraries imported, behind bubblewrap and seccomp)",
);
console.log(
  `  cold start (new sandbox: measuring a booted child, then booting one, first run): ${format(data.cold)} vs the standard library's ${format(py.cold)} = ${ratio(data.cold, py.cold)}`,
);
console.log(
  `  trivial pandas run, warm: median ${format(data.warmMedian)}, p95 ${format(data.warmP95)} vs the standard library's ${format(py.warmMedian)}, ${format(py.warmP95)} = ${ratio(data.warmMedian, py.warmMedian)}`,
);
console.log(
  `  back to back (each run waits for the next child's boot): median ${format(data.median)}, p95 ${format(data.p95)} vs ${format(py.median)}, ${format(py.p95)} = ${ratio(data.median, py.median)}`,
);
console.log(
  cpythonMs === null
    ? `  CPU-bound: ${format(data.cpuMs)}`
    : `  CPU-bound (the same fib and sieve, in CPython): ${format(data.cpuMs)} vs CPython outside the sandbox ${format(cpythonMs)} = ${(data.cpuMs / cpythonMs).toFixed(2)}x`,
);
console.log(
  "\nThe OS boundary's cost: bubblewrap against the first release's path (no bubblewrap), same run",
);
console.log(
  `  cold start: ${format(py.cold)} vs ${format(old.cold)} = ${ratio(py.cold, old.cold)}`,
);
console.log(
  `  warm run: median ${format(py.warmMedian)} vs ${format(old.warmMedian)} = ${ratio(py.warmMedian, old.warmMedian)}, p95 ${format(py.warmP95)} vs ${format(old.warmP95)} = ${ratio(py.warmP95, old.warmP95)}`,
);
console.log(
  `  back to back: median ${format(py.median)} vs ${format(old.median)} = ${ratio(py.median, old.median)}, p95 ${format(py.p95)} vs ${format(old.p95)} = ${ratio(py.p95, old.p95)}`,
);
