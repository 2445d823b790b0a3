/**
 * A static check of generated code before it runs: it refuses what cannot work in
 * the sandbox (modules, network, processes, timers, packages that are not there),
 * with a message that tells the model what to use instead. It saves a sandbox run
 * and a round of guessing; it is not a security layer (the sandbox is).
 */
import type { SandboxLanguage } from "../sandbox/protocol";

interface Rule {
  pattern: RegExp;
  problem: string;
}

const JAVASCRIPT_RULES: Rule[] = [
  {
    pattern: /\brequire\s*\(/,
    problem:
      "`require` does not exist in the sandbox: no module can be loaded; use built-in objects only",
  },
  {
    pattern: /^\s*import\s+[\w{*'"]|\bimport\s*\(/m,
    problem: "`import` cannot load anything in the sandbox: use built-in objects only",
  },
  {
    pattern: /\bprocess\s*\./,
    problem:
      "`process` does not exist in the sandbox: inputs are variables, output is console.log and the result",
  },
  {
    pattern: /\bfetch\s*\(|\bnew\s+(XMLHttpRequest|WebSocket)\b/,
    problem: "the sandbox has no network: work only on the inputs",
  },
  {
    pattern: /\b(setTimeout|setInterval|setImmediate)\s*\(/,
    problem: "the sandbox has no timers: compute directly, without waiting",
  },
];

/** Python modules that cannot work in the sandbox, and what to say about each. */
const PYTHON_MODULES: Record<string, string> = {
  socket: "the sandbox has no network",
  ssl: "the sandbox has no network",
  http: "the sandbox has no network",
  urllib: "the sandbox has no network",
  requests: "the sandbox has no network (and no packages)",
  httpx: "the sandbox has no network (and no packages)",
  aiohttp: "the sandbox has no network (and no packages)",
  ftplib: "the sandbox has no network",
  smtplib: "the sandbox has no network",
  subprocess: "the sandbox cannot start processes",
  multiprocessing: "the sandbox cannot start processes",
  threading: "the sandbox has no threads",
  ctypes: "the sandbox cannot load native code",
  // numpy, pandas, matplotlib and openpyxl are there (the sandbox's data engine).
  scipy:
    "scipy is not installed (the standard library, numpy, pandas, matplotlib and openpyxl only): use numpy",
  sklearn:
    "scikit-learn is not installed (the standard library, numpy, pandas, matplotlib and openpyxl only): use numpy or pandas",
  torch:
    "torch is not installed (the standard library, numpy, pandas, matplotlib and openpyxl only)",
  bs4: "BeautifulSoup is not installed (standard library only): use html.parser or re",
  lxml: "lxml is not installed (standard library only): use xml.etree or html.parser",
  yaml: "PyYAML is not installed (standard library only): use json",
};

const PYTHON_CALLS: Rule[] = [
  {
    pattern: /\bos\.(system|popen|fork|exec\w*|spawn\w*)\s*\(/,
    problem: "the sandbox cannot start processes",
  },
  { pattern: /\binput\s*\(/, problem: "the sandbox has no stdin: use the input variables" },
];

/**
 * Lists what keeps the code from running in the sandbox; empty when nothing does.
 *
 * @example
 * checkSandboxCode("python", "import scipy") // ["import scipy: scipy is not installed ..."]
 */
export function checkSandboxCode(language: SandboxLanguage, code: string): string[] {
  if (language === "javascript") {
    const text = withoutJsCommentsAndStrings(code);
    return JAVASCRIPT_RULES.filter((rule) => rule.pattern.test(text)).map((rule) => rule.problem);
  }
  const text = withoutPythonCommentsAndStrings(code);
  const problems: string[] = [];
  const imports =
    /^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b.*|import[ \t]+([\w., \t]+?)[ \t]*)$/gm;
  for (const match of text.matchAll(imports)) {
    const names = (match[1] ?? match[2] ?? "")
      .split(",")
      .map((part) => part.trim().split(/\s+/)[0] ?? "");
    for (const name of names) {
      const top = name.split(".")[0] ?? "";
      const why = PYTHON_MODULES[top];
      if (why) problems.push(`import ${name}: ${why}`);
    }
  }
  for (const rule of PYTHON_CALLS) if (rule.pattern.test(text)) problems.push(rule.problem);
  return [...new Set(problems)];
}

/** The code with comments and string contents blanked, so that words inside them do not count. */
function withoutJsCommentsAndStrings(code: string): string {
  return code.replace(
    /\/\/[^\n]*|\/\*[\s\S]*?\*\/|`(?:\\[\s\S]|[^\\`])*`|"(?:\\.|[^\\"\n])*"|'(?:\\.|[^\\'\n])*'/g,
    (token) => (token.startsWith("/") ? " " : `${token[0]}${token[0]}`),
  );
}

function withoutPythonCommentsAndStrings(code: string): string {
  return code.replace(
    /#[^\n]*|"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^\\"\n])*"|'(?:\\.|[^\\'\n])*'/g,
    (token) => (token.startsWith("#") ? " " : '""'),
  );
}
