/**
 * The inputs and outputs of an ONNX model (name, Open Inference Protocol datatype, shape with
 * -1 for symbolic dimensions), read straight from the protobuf of the .onnx file: the frontend
 * never loads onnxruntime (that is the workers' adapter), and these few fields need no more
 * than a wire-format walk. Initializers listed as graph inputs (IR < 4) are left out. The one
 * reader of a graph's IO: at registration for the Open Inference Protocol's metadata and checks
 * (frontend/models/model-io.ts), by the model-config checks of a generation graph
 * (engine-graph.ts) and of a pad rule, and by the Hugging Face directory check
 * (hf-model-dir.ts). The file is opened as a
 * model file is (schema/files/model-file.ts): a FIFO or device is refused, never waited on, and
 * every read goes through libuv's pool, off the event loop.
 */
import * as path from 'path';
import type { promises as fsp } from 'fs';
import { openModelFile } from '../../schema/files/model-file.js';

/** One tensor of the model's metadata. */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
}

/** The model's inputs and outputs. */
export interface ModelIo {
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** ONNX TensorProto.DataType → Open Inference Protocol datatype. */
const DATATYPES: Readonly<Record<number, string>> = {
  1: 'FP32',
  2: 'UINT8',
  3: 'INT8',
  4: 'UINT16',
  5: 'INT16',
  6: 'INT32',
  7: 'INT64',
  8: 'BYTES',
  9: 'BOOL',
  10: 'FP16',
  11: 'FP64',
  12: 'UINT32',
  13: 'UINT64',
  16: 'BF16',
};

/** A protobuf field: number, wire type, and its value (varint) or bytes (length-delimited). */
interface Field {
  readonly no: number;
  readonly varint: number;
  readonly bytes: Buffer | null;
}

function* fields(buf: Buffer): Generator<Field> {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) yield { no, varint: varint(), bytes: null };
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const len = varint();
      if (pos + len > buf.length) throw new Error('truncated field');
      yield { no, varint: 0, bytes: buf.subarray(pos, pos + len) };
      pos += len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

function child(buf: Buffer, no: number): Buffer | null {
  let found: Buffer | null = null;
  for (const f of fields(buf)) if (f.no === no && f.bytes !== null) found = f.bytes;
  return found;
}

/** One ValueInfoProto: name, datatype and shape (-1 for a symbolic dimension). */
export function valueInfo(buf: Buffer): TensorMetadata {
  let name = '';
  let datatype = 'UNKNOWN';
  const shape: number[] = [];
  for (const f of fields(buf)) {
    if (f.no === 1 && f.bytes !== null) name = f.bytes.toString('utf8');
    if (f.no !== 2 || f.bytes === null) continue;
    const tensorType = child(f.bytes, 1);
    if (tensorType === null) continue;
    for (const t of fields(tensorType)) {
      if (t.no === 1 && t.bytes === null) datatype = DATATYPES[t.varint] ?? 'UNKNOWN';
      if (t.no !== 2 || t.bytes === null) continue;
      for (const d of fields(t.bytes)) {
        if (d.no !== 1 || d.bytes === null) continue;
        let dim = -1;
        for (const v of fields(d.bytes)) if (v.no === 1 && v.bytes === null) dim = v.varint;
        shape.push(dim);
      }
    }
  }
  return { name, datatype, shape };
}

/** Parses the IO of an ONNX ModelProto; throws on a malformed file. */
export function parseOnnxIo(model: Buffer): ModelIo {
  const graph = child(model, 7);
  if (graph === null) throw new Error('no graph in the ONNX model');
  const inputs: TensorMetadata[] = [];
  const outputs: TensorMetadata[] = [];
  const initializers = new Set<string>();
  for (const f of fields(graph)) {
    if (f.bytes === null) continue;
    if (f.no === 11) inputs.push(valueInfo(f.bytes));
    else if (f.no === 12) outputs.push(valueInfo(f.bytes));
    else if (f.no === 5) {
      for (const t of fields(f.bytes)) if (t.no === 8 && t.bytes !== null) initializers.add(t.bytes.toString('utf8'));
    }
  }
  return { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs };
}

/** Bytes read from the file per window: field headers are read through it, payloads skipped. */
const WINDOW_BYTES = 64 * 1024;

/**
 * Reads an ONNX file by position through one small window, so the walk below can skip what it
 * does not need (the weights) without reading it.
 */
class WindowReader {
  private win = Buffer.alloc(0);
  private winPos = 0;
  /** Bytes read from the file so far. */
  bytesRead = 0;

  constructor(
    private readonly handle: fsp.FileHandle,
    readonly size: number,
  ) {}

  /** `len` bytes at `pos` (a copy when they are not all in the window). */
  async bytes(pos: number, len: number): Promise<Buffer> {
    if (pos < 0 || pos + len > this.size) throw new Error('truncated field');
    if (pos >= this.winPos && pos + len <= this.winPos + this.win.length)
      return this.win.subarray(pos - this.winPos, pos - this.winPos + len);
    const n = Math.max(len, Math.min(WINDOW_BYTES, this.size - pos));
    const buf = Buffer.alloc(n);
    const { bytesRead } = await this.handle.read(buf, 0, n, pos);
    this.bytesRead += bytesRead;
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
      const b = head[i] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return [v, pos + i + 1];
      mul *= 128;
    }
    throw new Error('truncated varint');
  }
}

/** A field's place in the file: its number, wire type, and its payload's range (length-delimited). */
interface FieldAt {
  readonly no: number;
  readonly wire: number;
  readonly start: number;
  readonly end: number;
}

/** The fields of the message in [start, end) of the file, payloads unread. */
async function* fieldsAt(r: WindowReader, start: number, end: number): AsyncGenerator<FieldAt> {
  let pos = start;
  while (pos < end) {
    const [key, afterKey] = await r.varint(pos);
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      pos = (await r.varint(afterKey))[1];
      yield { no, wire, start: afterKey, end: pos };
    } else if (wire === 1) pos = afterKey + 8;
    else if (wire === 5) pos = afterKey + 4;
    else if (wire === 2) {
      const [len, at] = await r.varint(afterKey);
      if (at + len > end) throw new Error('truncated field');
      yield { no, wire, start: at, end: at + len };
      pos = at + len;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

/**
 * The IO of an ONNX file and how many bytes were read for it. The walk reads the field headers
 * and the graph's inputs, outputs and initializer names, and skips every other payload: the
 * weights, nearly all of a model file (hundreds of MB, up to ONNX's 2 GB), are never read into
 * the frontend, which used to read the whole file for the first metadata or inference request.
 * `store` bounds where the file may resolve to (default: its own directory); a file outside it,
 * missing, or not regular is a ModelFileError.
 */
export async function scanOnnxIo(
  file: string,
  store = path.dirname(file),
): Promise<{ readonly io: ModelIo; readonly bytesRead: number }> {
  const { handle, size } = await openModelFile(store, file);
  try {
    const r = new WindowReader(handle, size);
    let graph: FieldAt | null = null;
    for await (const f of fieldsAt(r, 0, r.size)) if (f.no === 7 && f.wire === 2) graph = f;
    if (graph === null) throw new Error('no graph in the ONNX model');
    const inputs: TensorMetadata[] = [];
    const outputs: TensorMetadata[] = [];
    const initializers = new Set<string>();
    for await (const f of fieldsAt(r, graph.start, graph.end)) {
      if (f.wire !== 2) continue;
      if (f.no === 11) inputs.push(valueInfo(Buffer.from(await r.bytes(f.start, f.end - f.start))));
      else if (f.no === 12) outputs.push(valueInfo(Buffer.from(await r.bytes(f.start, f.end - f.start))));
      else if (f.no === 5) {
        for await (const t of fieldsAt(r, f.start, f.end)) {
          if (t.no === 8 && t.wire === 2) initializers.add((await r.bytes(t.start, t.end - t.start)).toString('utf8'));
        }
      }
    }
    return { io: { inputs: inputs.filter((i) => !initializers.has(i.name)), outputs }, bytesRead: r.bytesRead };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Reads an ONNX file's IO (without reading its weights): a few 64 KiB reads, once per model. */
export async function readOnnxIo(file: string, store = path.dirname(file)): Promise<ModelIo> {
  return (await scanOnnxIo(file, store)).io;
}
