/**
 * The dataset's own model: answers every LLM request of every case from the
 * case's `scripted` entries, so that all cases run at once on one stack against
 * the scripted OpenAI-compatible server (`test/support/llm-server.ts`).
 *
 * A request belongs to the case whose goal it carries (every LLM call of a
 * task shows the task's goal; the longest goal found wins), to the case whose
 * document it extracts (`Document: <filename>`), or, for the eval's judge, to
 * the case its marker names. A request no entry answers gets a 400 naming the
 * case and the purpose, which fails that case alone and says what to add.
 */
import type { Answer, RecordedRequest } from "../support/llm-server";
import type { EvalCase, ScriptedAnswer, ScriptedPurpose } from "./dataset";

/** The judge's task names its case with this marker (`judge.ts`), so its requests route here. */
export const judgeMarker = (caseId: string) => `[eval judge of case ${caseId}]`;

const JUDGE = /\[eval judge of case ([a-z0-9-]+)\]/;

/** The purpose of a request, from the name of its JSON schema. */
export function purposeOf(request: RecordedRequest, text: string): ScriptedPurpose {
  if (JUDGE.test(text)) return "judge";
  switch (request.schemaName) {
    case "plan":
    case "plan_update":
    case "jmp_condition":
    case "code":
    case "knowledge_graph":
    case "output_vars":
      return request.schemaName;
    default:
      return "llm_generate";
  }
}

/**
 * A responder for the scripted server that answers for all `cases` at once.
 * Each call consumes entries as `ScriptedAnswer` says; `unanswered` lists what
 * no entry answered (a test asserts it stays empty for a good dataset).
 * `reset` makes every entry unused again, so that the same cases run once more
 * (the eval runs them once per planning mode).
 *
 * @example
 * const script = scriptFor(cases);
 * llm.on(() => true, script.respond);
 */
export function scriptFor(cases: EvalCase[]): {
  respond: (request: RecordedRequest) => Answer;
  unanswered: string[];
  reset: () => void;
} {
  const fresh = () =>
    new Map(cases.map((c) => [c.id, c.scripted.map((e) => ({ ...e, used: false }))]));
  let left = fresh();
  const byGoal = [...cases].sort((a, b) => b.goal.length - a.goal.length);
  const byDocument = new Map<string, EvalCase>();
  for (const c of cases) {
    for (const d of c.documents ?? []) {
      const other = byDocument.get(d.filename);
      if (other)
        throw new Error(
          `cases ${other.id} and ${c.id} both ingest ${d.filename}: file names must be unique`,
        );
      byDocument.set(d.filename, c);
    }
  }
  const unanswered: string[] = [];

  function caseOf(purpose: ScriptedPurpose, text: string): EvalCase | undefined {
    if (purpose === "judge") {
      const id = JUDGE.exec(text)?.[1];
      return cases.find((c) => c.id === id);
    }
    if (purpose === "knowledge_graph") {
      const name = /^Document: (.+)$/m.exec(text)?.[1];
      return name === undefined ? undefined : byDocument.get(name.trim());
    }
    return byGoal.find((c) => text.includes(c.goal));
  }

  function respond(request: RecordedRequest): Answer {
    const text = request.messages.map((m) => m.content).join("\n");
    const purpose = purposeOf(request, text);
    const found = caseOf(purpose, text);
    const entries = found ? (left.get(found.id) ?? []) : [];
    const entry = entries.find(
      (e) => !e.used && e.purpose === purpose && (e.when === undefined || text.includes(e.when)),
    );
    if (entry) {
      if (!entry.repeat) entry.used = true;
      return answerOf(entry);
    }
    // Ingest asks for a graph of every chunk; a case that scripts none gets an empty one.
    if (purpose === "knowledge_graph") return { entities: [], relationships: [] };
    const what = `${found ? `case ${found.id}` : "no case"}: no scripted ${purpose} answer left for this request`;
    unanswered.push(what);
    return { fault: "status", status: 400, message: `eval script, ${what}` };
  }

  return {
    respond,
    unanswered,
    reset: () => {
      left = fresh();
    },
  };
}

function answerOf(entry: ScriptedAnswer): Answer {
  if (entry.fault === "500") return { fault: "500" };
  if (entry.fault === "bad_json") return { fault: "bad_json" };
  return entry.answer;
}
