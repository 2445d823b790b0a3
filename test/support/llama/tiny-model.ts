/**
 * The tiny model the real llama.cpp server serves in the tests: a llama
 * architecture of about 0.4 million random weights (2 layers, width 128), a
 * SentencePiece-style vocabulary llama.cpp's "llama" tokenizer accepts (the
 * control tokens, all 256 byte tokens, so any input text tokenizes, and the
 * printable ASCII characters), and a ChatML chat template, so that
 * `/v1/chat/completions`, structured output and `/v1/embeddings` all work.
 * Its answers are noise: the tests assert what the server accepts and how the
 * project reads it, never what the model says.
 *
 * The weights come from a seeded generator, so the file is the same bytes on
 * every machine.
 *
 * @example
 * const path = await ensureTinyModel(); // .stackvm/llama/<version>/models/tiny-llama.gguf
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { llamaCacheDir } from "./build";
import { type GgufTensor, type GgufValue, writeGguf } from "./gguf";

/** The shape of the tiny model. */
export const TINY_MODEL = {
  name: "stackvm-tiny-llama",
  /** The context it was "trained" for; the server's `-c` may be smaller. */
  // Large: with one token per character, the planner's prompt is some 10,000 tokens.
  contextLength: 32768,
  embedding: 128,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  feedForward: 384,
  seed: 25,
} as const;

/** The ChatML template (as Qwen and many local models use), in Jinja. */
export const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// llama_token_type in llama.cpp's llama-vocab.h
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const BYTE = 6;

/** The vocabulary: tokens, their scores and their types. */
export function tinyVocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens: string[] = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"];
  const types: number[] = [UNKNOWN, CONTROL, CONTROL, CONTROL, CONTROL];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(BYTE);
  }
  // SentencePiece writes a space as U+2581; the printable ASCII characters follow.
  for (const piece of [
    "\u2581",
    ...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)),
  ]) {
    tokens.push(piece);
    types.push(NORMAL);
  }
  const scores = tokens.map((_, i) => (types[i] === NORMAL ? -i : 0));
  return { tokens, scores, types };
}

/** The GGUF bytes of the tiny model (deterministic). */
export function tinyModelBytes(): Uint8Array {
  const m = TINY_MODEL;
  const vocab = tinyVocabulary();
  const headDim = m.embedding / m.heads;
  const kvWidth = headDim * m.kvHeads;
  const eos = vocab.tokens.indexOf("<|im_end|>");
  const metadata: Record<string, GgufValue> = {
    "general.architecture": { type: "string", value: "llama" },
    "general.name": { type: "string", value: m.name },
    "general.file_type": { type: "u32", value: 0 },
    "llama.context_length": { type: "u32", value: m.contextLength },
    "llama.embedding_length": { type: "u32", value: m.embedding },
    "llama.block_count": { type: "u32", value: m.layers },
    "llama.feed_forward_length": { type: "u32", value: m.feedForward },
    "llama.attention.head_count": { type: "u32", value: m.heads },
    "llama.attention.head_count_kv": { type: "u32", value: m.kvHeads },
    "llama.attention.layer_norm_rms_epsilon": { type: "f32", value: 1e-5 },
    "llama.rope.dimension_count": { type: "u32", value: headDim },
    "llama.rope.freq_base": { type: "f32", value: 10000 },
    "llama.vocab_size": { type: "u32", value: vocab.tokens.length },
    "tokenizer.ggml.model": { type: "string", value: "llama" },
    "tokenizer.ggml.tokens": { type: "string[]", value: vocab.tokens },
    "tokenizer.ggml.scores": { type: "f32[]", value: vocab.scores },
    "tokenizer.ggml.token_type": { type: "i32[]", value: vocab.types },
    "tokenizer.ggml.bos_token_id": { type: "u32", value: 1 },
    "tokenizer.ggml.eos_token_id": { type: "u32", value: eos },
    "tokenizer.ggml.unknown_token_id": { type: "u32", value: 0 },
    "tokenizer.ggml.add_bos_token": { type: "bool", value: false },
    "tokenizer.ggml.add_space_prefix": { type: "bool", value: false },
    "tokenizer.chat_template": { type: "string", value: CHAT_TEMPLATE },
  };
  const random = seeded(m.seed);
  const weights = (...shape: number[]): Float32Array => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = (random() - 0.5) * 0.1;
    return data;
  };
  const ones = (n: number) => new Float32Array(n).fill(1);
  const n = vocab.tokens.length;
  const tensors: GgufTensor[] = [
    { name: "token_embd.weight", shape: [m.embedding, n], data: weights(m.embedding, n) },
    { name: "output_norm.weight", shape: [m.embedding], data: ones(m.embedding) },
    { name: "output.weight", shape: [m.embedding, n], data: weights(m.embedding, n) },
  ];
  for (let layer = 0; layer < m.layers; layer++) {
    const blk = `blk.${layer}`;
    tensors.push(
      { name: `${blk}.attn_norm.weight`, shape: [m.embedding], data: ones(m.embedding) },
      {
        name: `${blk}.attn_q.weight`,
        shape: [m.embedding, m.embedding],
        data: weights(m.embedding, m.embedding),
      },
      {
        name: `${blk}.attn_k.weight`,
        shape: [m.embedding, kvWidth],
        data: weights(m.embedding, kvWidth),
      },
      {
        name: `${blk}.attn_v.weight`,
        shape: [m.embedding, kvWidth],
        data: weights(m.embedding, kvWidth),
      },
      {
        name: `${blk}.attn_output.weight`,
        shape: [m.embedding, m.embedding],
        data: weights(m.embedding, m.embedding),
      },
      { name: `${blk}.ffn_norm.weight`, shape: [m.embedding], data: ones(m.embedding) },
      {
        name: `${blk}.ffn_gate.weight`,
        shape: [m.embedding, m.feedForward],
        data: weights(m.embedding, m.feedForward),
      },
      {
        name: `${blk}.ffn_up.weight`,
        shape: [m.embedding, m.feedForward],
        data: weights(m.embedding, m.feedForward),
      },
      {
        name: `${blk}.ffn_down.weight`,
        shape: [m.feedForward, m.embedding],
        data: weights(m.feedForward, m.embedding),
      },
    );
  }
  return writeGguf(metadata, tensors);
}

/** How many weights the tiny model has. */
export function tinyModelParameters(): number {
  const m = TINY_MODEL;
  const n = tinyVocabulary().tokens.length;
  const kvWidth = (m.embedding / m.heads) * m.kvHeads;
  const perLayer =
    2 * m.embedding +
    2 * m.embedding * m.embedding +
    2 * m.embedding * kvWidth +
    3 * m.embedding * m.feedForward;
  return 2 * m.embedding * n + m.embedding + m.layers * perLayer;
}

/** The path of the tiny model, written first when it is not there. */
export async function ensureTinyModel(): Promise<string> {
  const dir = join(llamaCacheDir(), "models");
  // The name carries the shape: a changed model is written anew, not read stale.
  const shape = createHash("sha256")
    .update(JSON.stringify([TINY_MODEL, CHAT_TEMPLATE, tinyVocabulary().tokens]))
    .digest("hex")
    .slice(0, 8);
  const path = join(dir, `tiny-llama-${shape}.gguf`);
  if (existsSync(path)) return path;
  await mkdir(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, tinyModelBytes());
  await rename(partial, path);
  return path;
}

/** mulberry32: a small seeded generator, so the weights are the same everywhere. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
