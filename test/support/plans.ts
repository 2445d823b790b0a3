/** Plan instructions as tests write them. */

/** A `calling` of `tool_name` with its params, setting `output_vars`. */
export const call = (
  seq_no: number,
  tool_name: string,
  tool_params: object,
  output_vars: string[],
) => ({
  seq_no,
  type: "calling",
  parameters: { tool_name, tool_params, output_vars },
});

/** An `assign` of the final answer. */
export const finish = (seq_no: number, value: unknown) => ({
  seq_no,
  type: "assign",
  parameters: { final_answer: value },
});

/** A plan that asks a person `question` first (`ask_human`), then answers with the reply: a task that waits. */
export const askFirst = (question: string) => [
  call(0, "ask_human", { question }, ["a"]),
  finish(1, "${a}"),
];
