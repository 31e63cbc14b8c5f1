/**
 * The one adapter over onnxruntime-node: sessions with our fixed options and plain typed-array
 * tensors in and out. Nothing else in the project imports onnxruntime-node.
 *
 * Inputs are wrapped without copying (the binding passes them by pointer, and `subarray` views
 * are accepted); outputs are the binding's own freshly copied buffers, handed back as they are,
 * unless the caller hands in a preallocated output (`run`'s `into`): onnxruntime then writes
 * that output straight into the caller's buffer, with no allocation and no copy out.
 */
import * as ort from 'onnxruntime-node';
import type { TensorDType } from '../../schema/tensors.js';

/** Element types the project's models use. */
export type OrtDType = 'float32' | 'float16' | 'int64' | 'int32' | 'int16' | 'bool';

/** Typed array for each element type. */
export interface OrtDataOf {
  readonly float32: Float32Array;
  /** IEEE half floats as their bit patterns (Node 20 has no Float16Array). */
  readonly float16: Uint16Array;
  readonly bool: Uint8Array;
  readonly int64: BigInt64Array;
  readonly int32: Int32Array;
  readonly int16: Int16Array;
}

/** A tensor fed to `run()`: a typed array (or a view of one) and its shape. */
export type OrtTensorInput =
  | { readonly type: 'float32'; readonly data: Float32Array; readonly dims: readonly number[] }
  | { readonly type: 'float16'; readonly data: Uint16Array; readonly dims: readonly number[] }
  | { readonly type: 'bool'; readonly data: Uint8Array; readonly dims: readonly number[] }
  | { readonly type: 'int64'; readonly data: BigInt64Array; readonly dims: readonly number[] }
  | { readonly type: 'int32'; readonly data: Int32Array; readonly dims: readonly number[] };

/** A tensor returned by `run()`; `data` is owned by the caller (a fresh buffer per run). */
export type OrtTensorOutput =
  OrtTensorInput | { readonly type: 'int16'; readonly data: Int16Array; readonly dims: readonly number[] };

/** The typed array of any element type the built-in onnx handler feeds: float16 as its bits, bool as bytes. */
export type OrtAnyData =
  | Float32Array
  | Float64Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigInt64Array
  | BigUint64Array;

/**
 * A tensor of any of the built-in handler's element types. Fed to `run()` like the others;
 * `run()` answers such an output with the typed array onnxruntime gives that type (as above).
 */
export interface OrtAnyTensor {
  readonly type: TensorDType;
  readonly data: OrtAnyData;
  readonly dims: readonly number[];
}

/** Session options chosen by the caller; everything else is fixed by this adapter. */
export interface OrtSessionOptions {
  /** intraOpNumThreads (default 1: workers share a small machine). */
  readonly threads?: number;
}

/** A loaded model. `run()` blocks the event loop for the whole step (see the binding notes). */
export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Element type of each tensor input and output by name (`float32`, `int64`, …); absent for a non-tensor one. */
  readonly valueTypes: Readonly<Record<string, string>>;
  /** Shape of each tensor input and output by name: a number per fixed dimension, a name per symbolic one. */
  readonly inputDims: Readonly<Record<string, readonly (number | string)[]>>;
  /** Declared shape of each tensor input and output: a size, or -1 for a dynamic axis (absent when the graph gives none). */
  readonly valueShapes?: Readonly<Record<string, readonly number[]>>;
  /**
   * Runs the graph; `outputs` limits which outputs are computed and copied out. An output named
   * in `into` is written into that tensor's buffer (its dims must be the output's exact shape)
   * and returned over the same memory; it is fetched whether or not `outputs` names it.
   */
  run(
    feeds: Readonly<Record<string, OrtTensorInput | OrtAnyTensor>>,
    outputs?: readonly string[],
    into?: Readonly<Record<string, OrtTensorInput>>,
  ): Promise<Record<string, OrtTensorOutput>>;
  /** Frees the native session; the object is unusable afterwards. */
  release(): Promise<void>;
}

/** Wraps a Float32Array (or a view) as an input tensor, without copying. */
export function tensorF32(data: Float32Array, dims: readonly number[]): OrtTensorInput {
  return { type: 'float32', data, dims };
}

/** Wraps half floats (their bit patterns, or a view) as a float16 input tensor, without copying. */
export function tensorF16(data: Uint16Array, dims: readonly number[]): OrtTensorInput {
  return { type: 'float16', data, dims };
}

/** Wraps bytes of 0/1 as a bool input tensor, without copying. */
export function tensorBool(data: Uint8Array, dims: readonly number[]): OrtTensorInput {
  return { type: 'bool', data, dims };
}

/** Wraps a BigInt64Array (or a view) as an int64 input tensor, without copying. */
export function tensorI64(data: BigInt64Array, dims: readonly number[]): OrtTensorInput {
  return { type: 'int64', data, dims };
}

/** Wraps an Int32Array (or a view) as an int32 input tensor, without copying. */
export function tensorI32(data: Int32Array, dims: readonly number[]): OrtTensorInput {
  return { type: 'int32', data, dims };
}

class Session implements OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly valueTypes: Readonly<Record<string, string>>;
  readonly inputDims: Readonly<Record<string, readonly (number | string)[]>>;
  readonly valueShapes: Readonly<Record<string, readonly number[]>>;

  constructor(private readonly inner: ort.InferenceSession) {
    this.inputNames = Object.freeze([...inner.inputNames]);
    this.outputNames = Object.freeze([...inner.outputNames]);
    const types: Record<string, string> = {};
    const dims: Record<string, readonly (number | string)[]> = {};
    const shapes: Record<string, readonly number[]> = {};
    for (const m of [...inner.inputMetadata, ...inner.outputMetadata]) {
      if (!m.isTensor) continue;
      types[m.name] = m.type;
      dims[m.name] = Object.freeze([...m.shape]);
      // A symbolic axis comes as its name (a string): dynamic, as an unnamed one.
      shapes[m.name] = Object.freeze(m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1)));
    }
    this.valueTypes = Object.freeze(types);
    this.inputDims = Object.freeze(dims);
    this.valueShapes = Object.freeze(shapes);
  }

  async run(
    feeds: Readonly<Record<string, OrtTensorInput | OrtAnyTensor>>,
    outputs?: readonly string[],
    into?: Readonly<Record<string, OrtTensorInput>>,
  ): Promise<Record<string, OrtTensorOutput>> {
    const wrapped: Record<string, ort.Tensor> = {};
    for (const name in feeds) {
      const f = feeds[name]!;
      // The Tensor constructor keeps a reference to `data`; no copy happens here.
      wrapped[name] = new ort.Tensor(f.type, f.data, f.dims);
    }
    let result: ort.InferenceSession.ReturnType;
    if (into === undefined) {
      result =
        outputs === undefined ? await this.inner.run(wrapped) : await this.inner.run(wrapped, outputs as string[]);
    } else {
      // Fetches as an object: null lets the binding allocate, a tensor is written in place.
      const fetches: Record<string, ort.Tensor | null> = {};
      for (const name of outputs ?? this.outputNames) fetches[name] = null;
      for (const name in into) {
        const t = into[name]!;
        fetches[name] = new ort.Tensor(t.type, t.data, t.dims);
      }
      result = await this.inner.run(wrapped, fetches);
    }
    const out: Record<string, OrtTensorOutput> = {};
    for (const name in result) {
      const t = result[name]!;
      out[name] = { type: t.type, data: t.data, dims: t.dims } as OrtTensorOutput;
    }
    return out;
  }

  release(): Promise<void> {
    return this.inner.release();
  }
}

/**
 * Node 24 has a native Float16Array, and onnxruntime-common then stores a float16 tensor's data as
 * one; onnxruntime-node 1.30's binding reads tensors through N-API, which sees a Float16Array as
 * empty ("not enough space: expected 16, got 0"). onnxruntime-common decides once, at its first
 * tensor, whether Float16Array exists: that first look is made here with it hidden, so float16
 * data stays Uint16Array bits (as on Node 20) on every runtime.
 */
function keepFloat16AsBits(): void {
  const g = globalThis as { Float16Array?: unknown };
  const saved = g.Float16Array;
  if (saved === undefined) return;
  try {
    delete g.Float16Array;
    void new ort.Tensor('float32', new Float32Array(1), [1]);
  } finally {
    g.Float16Array = saved;
  }
}
keepFloat16AsBits();

/** Loads an .onnx file with the project's fixed options (sequential, all optimizations). */
export async function createSession(file: string, opts: OrtSessionOptions = {}): Promise<OrtSession> {
  const inner = await ort.InferenceSession.create(file, {
    intraOpNumThreads: opts.threads ?? 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  return new Session(inner);
}
