/**
 * For the StackVM corpus test only: what the original StackVM (ngaut/stackvm)
 * answers for a plan, given scripted LLM and retrieval answers, written from its
 * documented rules and not from its code. Kept apart from our VM on purpose: it
 * shares nothing with it but the script both are given.
 *
 * The rules modelled (StackVM's `instruction_handlers.py`, `variable_manager.py`,
 * `engine.py`, as the project's research notes describe them):
 * - the program counter is an index into the plan; a jump names a `seq_no`;
 * - `${name}` and `${name.key}` become Python's `str()` of the value, by text
 *   replacement for each variable set, in the order they were first set (so a
 *   name with a stray space, " x", is matched by `${ x}`); a reference that
 *   matches no variable, or a key that a dict value lacks or a value that is no
 *   dict, stays as its text; only the top-level values of `tool_params` and of
 *   `assign` are interpolated;
 * - a conditional `jmp` asks the LLM and goes to `jump_if_true` or `jump_if_false`;
 * - a `calling` with one output var stores the whole result; with several, the
 *   first JSON object of the (string) result, by key;
 * - setting a variable whose name is a substring of "final_answer" ends the run
 *   (StackVM's `var_name in ("final_answer")`, kept as it was);
 * - `reasoning` does nothing;
 * - an instruction of an unknown type runs as a `calling` of its `tool_name`.
 * Plans of StackVM's first spec ran the same way in the VM of their time: a tool
 * name as the type was the call (`llm_generate{prompt, context, output_var}`),
 * and `jmp_if` was the conditional `jmp` (merged into it on 2024-10-13).
 * Not modelled, as no sampled plan needs them: arithmetic in `assign` (the
 * evaluator refuses such a plan), garbage collection of variables (it never
 * changes an answer; `variables` is every variable the run set), step results
 * reused on a backward jump, and the parallel look-ahead (it runs the same steps).
 */

/** The answers both VMs are given: the scripted LLM and the scripted retrieval. */
export interface StackvmScript {
  /** The text the LLM answers for the instruction at `seqNo`, given what it was sent. */
  generate(seqNo: number, sent: string, outputVars: readonly string[]): string;
  /** The verdict for the conditional jump at `seqNo`, given what it was sent. */
  condition(seqNo: number, sent: string): boolean;
  /** What a retrieval tool answers for a query. */
  retrieve(tool: string, query: string): unknown;
}

type Instruction = { seq_no: number; type: string; parameters: Record<string, unknown> };

const MATH = /^(?=.*[-+*/().%])[-+*/().%\d\s]+$/;

/** Python's `str()` of a JSON value, as StackVM put a value into text. */
export function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string")
    return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return String(value);
}

/** What StackVM's run of a plan ends with. */
export interface StackvmRun {
  /** The seq_no of every step run, in order (jumps and reasoning included). */
  path: number[];
  /** Every variable set, with its last value, in the order first set. */
  variables: Map<string, unknown>;
  finalAnswer: unknown;
}

/** The final answer StackVM gives for `plan`, or throws where it would fail the step. */
export function stackvmAnswer(plan: readonly Instruction[], script: StackvmScript): unknown {
  return stackvmRun(plan, script).finalAnswer;
}

/** StackVM's run of `plan`: its path, variables and final answer; throws where it would fail. */
export function stackvmRun(plan: readonly Instruction[], script: StackvmScript): StackvmRun {
  const vars = new Map<string, unknown>();
  const path: number[] = [];
  const interpolate = (value: unknown): unknown => {
    if (typeof value !== "string") return value;
    let text = value;
    for (const [name, v] of vars) {
      text = text.replaceAll(`\${${name}}`, pythonStr(v));
      if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        for (const [key, item] of Object.entries(v)) {
          text = text.replaceAll(`\${${name}.${key}}`, pythonStr(item));
        }
      }
    }
    return text;
  };
  const indexOf = (seq: unknown) => {
    const i = plan.findIndex((s) => s.seq_no === seq);
    if (i < 0) throw new Error(`Target step ${String(seq)} not found`);
    return i;
  };
  let done = false;
  const set = (name: string, value: unknown) => {
    vars.set(name, value);
    if ("final_answer".includes(name)) done = true;
  };
  let pc = 0;
  for (let steps = 0; !done; steps++) {
    if (pc >= plan.length) throw new Error(`Program counter out of range: ${pc}`);
    if (steps > 1000) throw new Error("the plan does not end");
    const { seq_no: seq, type, parameters: p } = plan[pc]!;
    path.push(seq);
    let next = pc + 1;
    if (type === "reasoning") {
      // logged only
    } else if (type === "assign") {
      for (const [name, raw] of Object.entries(p)) {
        const value = interpolate(raw);
        if (typeof value === "string" && MATH.test(value.replaceAll(" ", ""))) {
          throw new Error("arithmetic in assign is not modelled here");
        }
        set(name, value);
      }
    } else if ((type === "jmp" || type === "jmp_if") && "condition_prompt" in p) {
      const sent = `${pythonStr(interpolate(p.condition_prompt))}\n${pythonStr(interpolate(p.context ?? ""))}`;
      next = indexOf(script.condition(seq, sent) ? p.jump_if_true : p.jump_if_false);
    } else if (type === "jmp") {
      next = indexOf(p.target_seq);
    } else {
      const call = asCall(type, p);
      const params = Object.fromEntries(
        Object.entries(call.params).map(([k, v]) => [k, interpolate(v)]),
      );
      const result =
        call.tool === "llm_generate"
          ? script.generate(
              seq,
              `${pythonStr(params.prompt)}\n${pythonStr(params.context ?? "")}`,
              call.outputVars,
            )
          : script.retrieve(call.tool, String(params.query));
      // No output vars: the call runs and sets nothing (StackVM's `_set_output_vars`).
      if (call.outputVars.length === 1) set(call.outputVars[0]!, result);
      else if (call.outputVars.length > 1) {
        const object = firstJsonObject(result);
        for (const name of call.outputVars) {
          if (!(name in object)) throw new Error(`the result has no key ${name}`);
          set(name, object[name]);
        }
      }
    }
    pc = next;
  }
  return { path, variables: vars, finalAnswer: vars.get("final_answer") };
}

/** A call in either form: `calling{tool_name, tool_params, output_vars}` or a tool name as the type. */
function asCall(type: string, p: Record<string, unknown>) {
  if (type === "calling" || typeof p.tool_name === "string") {
    return {
      tool: String(p.tool_name),
      params: p.tool_params as Record<string, unknown>,
      outputVars: p.output_vars as string[],
    };
  }
  const { output_var, output_vars, ...params } = p;
  return {
    tool: type,
    params,
    outputVars: (output_vars as string[] | undefined) ?? [String(output_var)],
  };
}

function firstJsonObject(result: unknown): Record<string, unknown> {
  if (typeof result !== "string") throw new Error("a result for several output vars must be text");
  const start = result.indexOf("{");
  const end = result.lastIndexOf("}");
  return JSON.parse(result.slice(start, end + 1)) as Record<string, unknown>;
}
