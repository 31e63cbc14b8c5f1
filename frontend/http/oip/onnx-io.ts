/**
 * The inputs and outputs of an ONNX model (name, Open Inference Protocol datatype, shape with
 * -1 for symbolic dimensions), read straight from the protobuf of the .onnx file: the frontend
 * never loads onnxruntime (that is the workers' adapter), and these few fields need no more
 * than a wire-format walk. Initializers listed as graph inputs (IR < 4) are left out.
 */
import { readFile } from 'fs/promises';

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
  1: 'FP32', 2: 'UINT8', 3: 'INT8', 4: 'UINT16', 5: 'INT16', 6: 'INT32', 7: 'INT64', 8: 'BYTES',
  9: 'BOOL', 10: 'FP16', 11: 'FP64', 12: 'UINT32', 13: 'UINT64', 16: 'BF16',
};

/** A protobuf field: number, wire type, and its value (varint) or bytes (length-delimited). */
interface Field { readonly no: number; readonly varint: number; readonly bytes: Buffer | null }

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

function valueInfo(buf: Buffer): TensorMetadata {
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

/** Reads and parses an ONNX file's IO. */
export async function readOnnxIo(file: string): Promise<ModelIo> {
  return parseOnnxIo(await readFile(file));
}
