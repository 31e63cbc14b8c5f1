/**
 * A tiny ONNX graph builder over onnx-proto (the only importer of onnx-proto): initializers from
 * typed arrays, nodes with auto-named outputs, inputs/outputs with symbolic dims, opset 17.
 * Serialization is deterministic: the same calls produce byte-identical files.
 */
import { writeFileSync } from 'node:fs';
import onnxProto from 'onnx-proto';
import type { onnx as OnnxT } from 'onnx-proto';

// onnx-proto is CommonJS whose named exports Node's ESM loader cannot detect; take them from the default.
const { onnx } = onnxProto;

/** Element types used in graph inputs, outputs and initializers. */
export type ElemType = 'float32' | 'float16' | 'int64' | 'int32' | 'int16' | 'bool';

/** A dimension: a fixed size or a symbolic name such as 'batch'. */
export type Dim = number | string;

/** A node attribute value, tagged by its ONNX attribute kind. */
export type AttrValue =
  | { readonly i: number }
  | { readonly f: number }
  | { readonly s: string }
  | { readonly ints: readonly number[] }
  | { readonly floats: readonly number[] }
  | { readonly t: OnnxT.ITensorProto };

/** The opset every generated model targets (LayerNormalization needs 17). */
export const OPSET = 17;
/** IR version 8 is what ONNX 1.12+ writes for opset 17. */
const IR_VERSION = 8;

const ELEM: Readonly<Record<ElemType, number>> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  float16: onnx.TensorProto.DataType.FLOAT16,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
  int16: onnx.TensorProto.DataType.INT16,
  bool: onnx.TensorProto.DataType.BOOL,
};

function bytesOf(data: Float32Array | Uint16Array | BigInt64Array | Int32Array): Uint8Array {
  // Views share memory; protobufjs copies when encoding. Little-endian, like ONNX raw_data.
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function valueInfo(name: string, type: ElemType, dims: readonly Dim[]): OnnxT.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEM[type],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

function attribute(name: string, v: AttrValue): OnnxT.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ('i' in v) return { name, type: T.INT, i: v.i };
  if ('f' in v) return { name, type: T.FLOAT, f: v.f };
  if ('s' in v) return { name, type: T.STRING, s: new TextEncoder().encode(v.s) };
  if ('ints' in v) return { name, type: T.INTS, ints: [...v.ints] };
  if ('floats' in v) return { name, type: T.FLOATS, floats: [...v.floats] };
  return { name, type: T.TENSOR, t: v.t };
}

/** Builds one graph; names of values are plain strings. */
export class GraphBuilder {
  private readonly nodes: OnnxT.INodeProto[] = [];
  private readonly inits: OnnxT.ITensorProto[] = [];
  private readonly inputs: OnnxT.IValueInfoProto[] = [];
  private readonly outputs: OnnxT.IValueInfoProto[] = [];
  private readonly constCache = new Map<string, string>();
  /** Values renamed by `output()`: later nodes that name the old value get the new one. */
  private readonly alias = new Map<string, string>();
  private counter = 0;

  constructor(private readonly name: string) {}

  /** Declares a graph input; returns its name. */
  input(name: string, type: ElemType, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(name, type, dims));
    return name;
  }

  /**
   * Declares a graph output produced under `value`. A node output is renamed to `name` in place
   * (no Identity node: each one is a copy and a dispatch per run); a graph input or an
   * initializer goes through an Identity.
   */
  output(name: string, type: ElemType, dims: readonly Dim[], value: string = name): string {
    value = this.alias.get(value) ?? value;
    if (value !== name) {
      const producer = this.nodes.find((n) => n.output!.includes(value));
      if (producer === undefined || this.outputs.some((o) => o.name === value)) {
        this.nodes.push({ opType: 'Identity', input: [value], output: [name], name: `out_${name}` });
      } else {
        for (const n of this.nodes) {
          n.input = n.input!.map((v) => (v === value ? name : v));
          n.output = n.output!.map((v) => (v === value ? name : v));
        }
        this.alias.set(value, name);
      }
    }
    this.outputs.push(valueInfo(name, type, dims));
    return name;
  }

  /** Adds a float32 initializer; returns its name. */
  initF32(name: string, data: Float32Array, dims: readonly number[]): string {
    this.inits.push({ name, dataType: ELEM.float32, dims: [...dims], rawData: bytesOf(data) });
    return name;
  }

  /** Adds a float16 initializer (half floats as bit patterns); returns its name. */
  initF16(name: string, data: Uint16Array, dims: readonly number[]): string {
    this.inits.push({ name, dataType: ELEM.float16, dims: [...dims], rawData: bytesOf(data) });
    return name;
  }

  /** Adds an int64 initializer; returns its name. */
  initI64(name: string, values: readonly number[], dims: readonly number[] = [values.length]): string {
    const data = BigInt64Array.from(values, (v) => BigInt(v));
    this.inits.push({ name, dataType: ELEM.int64, dims: [...dims], rawData: bytesOf(data) });
    return name;
  }

  /** A shared int64 1-D constant (e.g. axes, shapes), added once per distinct value. */
  constI64(values: readonly number[]): string {
    const key = `i64:${values.join(',')}`;
    let name = this.constCache.get(key);
    if (name === undefined) {
      name = `const_i64_${this.constCache.size}`;
      this.initI64(name, values);
      this.constCache.set(key, name);
    }
    return name;
  }

  /** A shared float32 scalar constant, added once per distinct value. */
  constF32(value: number): string {
    const key = `f32:${value}`;
    let name = this.constCache.get(key);
    if (name === undefined) {
      name = `const_f32_${this.constCache.size}`;
      this.initF32(name, Float32Array.of(value), []);
      this.constCache.set(key, name);
    }
    return name;
  }

  /** Adds a node with one output; returns the output's (auto-generated unless given) name. */
  op(
    opType: string,
    inputs: readonly string[],
    attrs: Readonly<Record<string, AttrValue>> = {},
    output?: string,
  ): string {
    return this.opN(opType, inputs, 1, attrs, output === undefined ? undefined : [output])[0]!;
  }

  /** Adds a node with `n` outputs; returns their names. */
  opN(
    opType: string,
    inputs: readonly string[],
    n: number,
    attrs: Readonly<Record<string, AttrValue>> = {},
    outputs?: readonly string[],
  ): string[] {
    const id = this.counter++;
    const outs =
      outputs !== undefined ? [...outputs] : Array.from({ length: n }, (_, k) => `${opType.toLowerCase()}_${id}_${k}`);
    this.nodes.push({
      opType,
      name: `${opType}_${id}`,
      input: inputs.map((v) => this.alias.get(v) ?? v),
      output: outs,
      attribute: Object.keys(attrs).map((k) => attribute(k, attrs[k]!)),
    });
    return outs;
  }

  /** Serializes the model (opset 17) to bytes. */
  toBytes(docString = ''): Uint8Array {
    const model: OnnxT.IModelProto = {
      irVersion: IR_VERSION,
      producerName: 'tsserve-tools-models',
      producerVersion: '1',
      docString,
      opsetImport: [{ domain: '', version: OPSET }],
      graph: {
        name: this.name,
        node: this.nodes,
        initializer: this.inits,
        input: this.inputs,
        output: this.outputs,
      },
    };
    return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  }

  /** Writes the serialized model to `file`. */
  write(file: string, docString = ''): void {
    writeFileSync(file, this.toBytes(docString));
  }
}
