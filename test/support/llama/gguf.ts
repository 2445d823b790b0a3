/**
 * A GGUF (version 3) file writer: metadata key/values and F32 tensors, laid out as
 * llama.cpp reads them (header, key/values, tensor infos, then the tensor data,
 * each piece aligned to 32 bytes). Only what the tiny test model needs; no npm
 * package writes GGUF (`@huggingface/gguf` only reads it).
 *
 * @example
 * const bytes = writeGguf(
 *   { "general.architecture": { type: "string", value: "llama" } },
 *   [{ name: "output_norm.weight", shape: [64], data: new Float32Array(64).fill(1) }],
 * );
 */

/** A typed metadata value; GGUF stores the type with each value. */
export type GgufValue =
  | { type: "string"; value: string }
  | { type: "u32"; value: number }
  | { type: "i32"; value: number }
  | { type: "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string[]"; value: string[] }
  | { type: "f32[]"; value: number[] }
  | { type: "i32[]"; value: number[] };

/** A tensor of 32-bit floats; `shape` in ggml's order (the fastest-moving dimension first). */
export interface GgufTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

const ALIGNMENT = 32;
// gguf_type in ggml/include/gguf.h
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
const GGML_TYPE_F32 = 0;

/** Serialises metadata and tensors into the bytes of a GGUF file. */
export function writeGguf(metadata: Record<string, GgufValue>, tensors: GgufTensor[]): Uint8Array {
  const out = new ByteWriter();
  out.bytes(new TextEncoder().encode("GGUF"));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    out.string(key);
    writeValue(out, value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const tensor of tensors) {
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) {
      throw new Error(
        `gguf: tensor ${tensor.name} has ${tensor.data.length} values, its shape says ${count}`,
      );
    }
    out.string(tensor.name);
    out.u32(tensor.shape.length);
    for (const dim of tensor.shape) out.u64(dim);
    out.u32(GGML_TYPE_F32);
    out.u64(offset);
    offsets.push(offset);
    offset = align(offset + tensor.data.byteLength);
  }
  out.pad();
  for (const [i, tensor] of tensors.entries()) {
    // Offsets are relative to the start of the data section, which starts aligned.
    while (out.length - out.dataStart() < (offsets[i] ?? 0)) out.u8(0);
    out.bytes(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
  }
  out.pad();
  return out.finish();
}

function writeValue(out: ByteWriter, value: GgufValue): void {
  switch (value.type) {
    case "string":
      out.u32(T.string);
      out.string(value.value);
      return;
    case "u32":
      out.u32(T.u32);
      out.u32(value.value);
      return;
    case "i32":
      out.u32(T.i32);
      out.i32(value.value);
      return;
    case "f32":
      out.u32(T.f32);
      out.f32(value.value);
      return;
    case "bool":
      out.u32(T.bool);
      out.u8(value.value ? 1 : 0);
      return;
    case "string[]":
      out.u32(T.array);
      out.u32(T.string);
      out.u64(value.value.length);
      for (const item of value.value) out.string(item);
      return;
    case "f32[]":
      out.u32(T.array);
      out.u32(T.f32);
      out.u64(value.value.length);
      for (const item of value.value) out.f32(item);
      return;
    case "i32[]":
      out.u32(T.array);
      out.u32(T.i32);
      out.u64(value.value.length);
      for (const item of value.value) out.i32(item);
      return;
  }
}

function align(n: number): number {
  return Math.ceil(n / ALIGNMENT) * ALIGNMENT;
}

/** A growing little-endian byte buffer. */
class ByteWriter {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  private start = -1;
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.reserve(1);
    this.view.setUint8(this.length, v);
    this.length += 1;
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buffer.set(b, this.length);
    this.length += b.length;
  }
  string(s: string): void {
    const encoded = new TextEncoder().encode(s);
    this.u64(encoded.length);
    this.bytes(encoded);
  }
  /** Pads to the alignment; the first call marks where the tensor data starts. */
  pad(): void {
    while (this.length % ALIGNMENT !== 0) this.u8(0);
    if (this.start < 0) this.start = this.length;
  }
  dataStart(): number {
    return this.start;
  }
  finish(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}
