/**
 * The input names of an ONNX model's graph, read from the file's protobuf without loading it:
 * the model-config check needs them to tell a generation model's KV layout (and whether it takes
 * num_logits) before a worker starts, and the frontend has no onnxruntime. Only field headers
 * are read; the weights (initializers, inside the graph before its inputs) are skipped by
 * their lengths, so a model of gigabytes costs a few reads per node.
 */
import * as fs from 'node:fs';

/** ModelProto.graph, GraphProto.input, ValueInfoProto.name (onnx.proto3). */
const MODEL_GRAPH = 7;
const GRAPH_INPUT = 11;
const VALUE_INFO_NAME = 1;
/** Protobuf wire types. */
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;
/** Bytes read at once: headers are a few bytes, a ValueInfoProto a few hundred. */
const WINDOW = 64 * 1024;

/** Thrown inside the walk when the bytes are not a protobuf message. */
class NotProtobuf extends Error {}

/** Positioned reads through one cached window. */
class Reader {
  private buf = Buffer.alloc(0);
  private at = 0;
  constructor(private readonly fd: number, readonly size: number) {}

  byte(pos: number): number {
    if (pos >= this.size) throw new NotProtobuf('past the end');
    if (pos < this.at || pos >= this.at + this.buf.length) {
      this.buf = Buffer.alloc(Math.min(WINDOW, this.size - pos));
      fs.readSync(this.fd, this.buf, 0, this.buf.length, pos);
      this.at = pos;
    }
    return this.buf[pos - this.at]!;
  }

  /** A varint at `pos`: its value and the position after it. */
  varint(pos: number): [number, number] {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte(pos + i);
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return [v, pos + i + 1];
      mul *= 128;
    }
    throw new NotProtobuf('varint over 10 bytes');
  }

  bytes(pos: number, len: number): Buffer {
    const out = Buffer.alloc(len);
    for (let i = 0; i < len; i++) out[i] = this.byte(pos + i);
    return out;
  }
}

/** Calls `onField(field, start, end)` for each length-delimited field in [from, to); skips the others. */
function fields(r: Reader, from: number, to: number, onField: (field: number, start: number, end: number) => void): void {
  let pos = from;
  while (pos < to) {
    const [tag, afterTag] = r.varint(pos);
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw new NotProtobuf('field 0');
    if (wire === VARINT) pos = r.varint(afterTag)[1];
    else if (wire === I64) pos = afterTag + 8;
    else if (wire === I32) pos = afterTag + 4;
    else if (wire === LEN) {
      const [len, start] = r.varint(afterTag);
      pos = start + len;
      if (pos > to) throw new NotProtobuf('a field past its message');
      onField(field, start, pos);
    } else throw new NotProtobuf(`wire type ${wire}`);
  }
  if (pos !== to) throw new NotProtobuf('a field past its message');
}

/**
 * The graph input names of the ONNX model at `file`, in order; null when the file cannot be
 * read or is not an ONNX model with a graph (the worker's load then says what is wrong).
 */
export function onnxGraphInputs(file: string): string[] | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const r = new Reader(fd, fs.fstatSync(fd).size);
    let names: string[] | null = null;
    fields(r, 0, r.size, (field, start, end) => {
      if (field !== MODEL_GRAPH) return;
      const found: string[] = [];
      fields(r, start, end, (gf, gs, ge) => {
        if (gf !== GRAPH_INPUT) return;
        fields(r, gs, ge, (vf, vs, ve) => { if (vf === VALUE_INFO_NAME) found.push(r.bytes(vs, ve - vs).toString('utf8')); });
      });
      names = found;
    });
    return names;
  } catch {
    // Not a protobuf (NotProtobuf), or a read that failed: the worker's load names the problem.
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
