/**
 * The inputs and outputs of an ONNX file of a model directory, read as a request is: the file
 * resolved inside the store (schema/files/model-file.ts), read off the event loop through one
 * small window, field headers only, the weights skipped unread. The asynchronous twin of
 * onnx-io.ts's `scanOnnxIo`, for the Hugging Face directory check (hf-model-dir.ts), which runs
 * in the frontend on every registration.
 */
import { constants, promises as fsp } from 'node:fs';
import { resolveModelFile } from '../../schema/files/model-file.js';
import type { ModelIo, TensorMetadata } from './onnx-io.js';
import { valueInfo } from './onnx-io.js';

/** Bytes read per window: field headers are read through it, payloads skipped. */
const WINDOW_BYTES = 64 * 1024;

/** Reads a file by position through one window (async). */
class AsyncWindow {
  private win = Buffer.alloc(0);
  private winPos = 0;

  constructor(
    private readonly fh: fsp.FileHandle,
    readonly size: number,
  ) {}

  async bytes(pos: number, len: number): Promise<Buffer> {
    if (pos < 0 || pos + len > this.size) throw new Error('truncated field');
    if (pos >= this.winPos && pos + len <= this.winPos + this.win.length)
      return this.win.subarray(pos - this.winPos, pos - this.winPos + len);
    const n = Math.max(len, Math.min(WINDOW_BYTES, this.size - pos));
    const buf = Buffer.alloc(n);
    const { bytesRead } = await this.fh.read(buf, 0, n, pos);
    if (bytesRead < len) throw new Error('truncated field');
    this.win = buf.subarray(0, bytesRead);
    this.winPos = pos;
    return this.win.subarray(0, len);
  }

  /** The varint at `pos` and the position after it. */
  async varint(pos: number): Promise<[number, number]> {
    const head = await this.bytes(pos, Math.min(10, this.size - pos));
    let v = 0;
    let mul = 1;
    for (let i = 0; i < head.length; i++) {
      const b = head[i]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return [v, pos + i + 1];
      mul *= 128;
    }
    throw new Error('truncated varint');
  }
}

/** A length-delimited field's number and payload range (other wire types are skipped). */
interface FieldAt {
  readonly no: number;
  readonly start: number;
  readonly end: number;
}

/** The length-delimited fields of the message in [start, end), payloads unread. */
async function fieldsAt(r: AsyncWindow, start: number, end: number): Promise<FieldAt[]> {
  const out: FieldAt[] = [];
  let pos = start;
  while (pos < end) {
    const [key, afterKey] = await r.varint(pos);
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) pos = (await r.varint(afterKey))[1];
    else if (wire === 1) pos = afterKey + 8;
    else if (wire === 5) pos = afterKey + 4;
    else if (wire === 2) {
      const [len, at] = await r.varint(afterKey);
      if (at + len > end) throw new Error('truncated field');
      out.push({ no, start: at, end: at + len });
      pos = at + len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

/** The IO of `file` (relative to or inside `store`); throws a ModelFileError or a parse Error. */
export async function readOnnxIoAsync(store: string, file: string): Promise<ModelIo> {
  const real = await resolveModelFile(store, file);
  // Non-blocking: a FIFO named like the model is refused by the stat below, never waited on.
  const fh = await fsp.open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error('not a regular file');
    const r = new AsyncWindow(fh, st.size);
    const graph = (await fieldsAt(r, 0, r.size)).filter((f) => f.no === 7).pop();
    if (graph === undefined) throw new Error('no graph in the ONNX model');
    const inputs: TensorMetadata[] = [];
    const outputs: TensorMetadata[] = [];
    const initializers = new Set<string>();
    for (const f of await fieldsAt(r, graph.start, graph.end)) {
      if (f.no === 11) inputs.push(valueInfo(Buffer.from(await r.bytes(f.start, f.end - f.start))));
      else if (f.no === 12) outputs.push(valueInfo(Buffer.from(await r.bytes(f.start, f.end - f.start))));
      else if (f.no === 5) {
        for (const t of await fieldsAt(r, f.start, f.end))
          if (t.no === 8) initializers.add((await r.bytes(t.start, t.end - t.start)).toString('utf8'));
      }
    }
    return { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs };
  } finally {
    await fh.close().catch(() => undefined);
  }
}
