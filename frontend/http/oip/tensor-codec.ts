/**
 * The Open Inference Protocol's REST bodies: an inference request as JSON, or as a JSON header
 * followed by raw tensor bytes (the binary tensor data extension: `Inference-Header-Content-Length`
 * gives the header's length, `parameters.binary_data_size` each input's bytes, little-endian,
 * row major, in input order). The response, JSON or JSON + binary outputs the same way, is
 * response-codec.ts's (re-exported here), the datatypes datatypes.ts's. Everything a client can get wrong is an `OipError` (400) with the protocol's `{"error"}` text.
 */
import { jsonErrorReason } from '../json-error.js';
import { decodeJsonTensor } from '../json-tensor.js';
import type { DeclaredDatatype } from './datatypes.js';
import { FIXED, notInRange, unreadable } from './datatypes.js';
import { OipError } from './oip-error-class.js';

export { OipError } from './oip-error-class.js';
export { datatypeMismatch } from './datatypes.js';
export type { DeclaredDatatype } from './datatypes.js';
export { EncodedResponse, encodeInferResponse } from './response-codec.js';
export type { InferResponse, OutputTensor } from './response-codec.js';

/** One decoded input tensor; `data` is flat, row major. */
export interface InputTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  /** Flat, row major; a Float32Array when the fast JSON path decoded an FP32 input's numbers. */
  readonly data: readonly (number | boolean)[] | Float32Array;
  /** A binary input's bytes as sent, when the request was decoded with `rawBinary` (`data` is then empty). */
  readonly bytes?: Uint8Array;
}

/** One requested output and whether it should come back as binary. */
export interface RequestedOutput {
  readonly name: string;
  /** The output's own `binary_data`, else the request's `binary_data_output`. */
  readonly binary: boolean;
}

/** A decoded inference request. */
export interface InferRequest {
  readonly id?: string;
  readonly inputs: readonly InputTensor[];
  /** Absent when the request names none, or gives an empty list (every output, as JSON unless `binary_data_output`). */
  readonly outputs?: readonly RequestedOutput[];
  /** The request's `binary_data_output` parameter. */
  readonly binaryOutput: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON value's kind for an error message: `a number`, `an array`, `null`. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The `parameters` of a request, input or output (`where` prefixes the message): the protocol's
 * `$parameters` is an object; null is read as left out, as KServe's own server reads it.
 */
function parametersOf(raw: Record<string, unknown>, where: string): Record<string, unknown> | undefined {
  const p = raw['parameters'];
  if (p === undefined || p === null) return undefined;
  if (!isObject(p)) throw new OipError(400, `${where}parameters must be an object, got ${kindOf(p)}`);
  return p;
}

/** A boolean parameter: a `"true"` taken as false would answer JSON to a client that reads bytes. */
function flagOf(params: Record<string, unknown> | undefined, key: string, where: string): boolean | undefined {
  const v = params?.[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean')
    throw new OipError(400, `${where}parameters.${key} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function flatten(v: unknown, out: unknown[]): void {
  if (Array.isArray(v)) for (const x of v) flatten(x, out);
  else out.push(v);
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Elements the binary parts of one request may still hold (`--max-json-elements`, as /predictions' binary tensors). */
interface BinaryBudget {
  left: number;
  readonly max: number;
}

function decodeInput(
  raw: unknown,
  i: number,
  binary: Buffer,
  offset: { at: number },
  budget: BinaryBudget,
  declared: DeclaredDatatype,
  preset?: Float32Array,
  rawBinary = false,
): InputTensor {
  if (!isObject(raw)) throw new OipError(400, `inputs[${i}] must be an object`);
  const name = raw['name'];
  if (typeof name !== 'string') throw new OipError(400, `inputs[${i}].name must be a string`);
  const datatype = raw['datatype'];
  if (typeof datatype !== 'string') throw new OipError(400, `input '${name}': datatype must be a string`);
  const shapeRaw = raw['shape'];
  if (!Array.isArray(shapeRaw) || !shapeRaw.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw new OipError(400, `input '${name}': shape must be an array of non-negative integers`);
  }
  const shape = shapeRaw as number[];
  const count = elementCount(shape);
  const fixed = FIXED[datatype];
  const params = parametersOf(raw, `input '${name}': `);
  const size = params?.['binary_data_size'];
  if (size !== undefined) {
    // Both would be two inputs in one: Triton refuses it too, rather than pick one.
    if ('data' in raw)
      throw new OipError(400, `input '${name}': has both data and parameters.binary_data_size; send one`);
    if (!Number.isSafeInteger(size) || (size as number) < 0)
      throw new OipError(400, `input '${name}': binary_data_size must be a non-negative integer`);
    if (fixed === undefined) throw unreadable(name, datatype, declared);
    const n = size as number;
    if (n !== count * fixed.size)
      throw new OipError(
        400,
        `input '${name}': binary_data_size ${n} does not match shape [${shape.join(',')}] of ${datatype} (${count * fixed.size} bytes)`,
      );
    if (offset.at + n > binary.length)
      throw new OipError(
        400,
        `input '${name}': the body holds ${binary.length - offset.at} bytes of binary data, binary_data_size says ${n}`,
      );
    if (count > budget.left)
      throw new OipError(
        400,
        `input '${name}': binary data of ${count} elements brings the request to ${budget.max - budget.left + count}, more than ${budget.max} (--max-json-elements)`,
      );
    budget.left -= count;
    if (rawBinary) {
      const bytes = binary.subarray(offset.at, offset.at + n);
      offset.at += n;
      return { name, datatype, shape, data: [], bytes };
    }
    const data: (number | boolean)[] = new Array<number | boolean>(count);
    for (let k = 0; k < count; k++) data[k] = fixed.read(binary, offset.at + k * fixed.size);
    // Only a 64-bit integer can fall outside its range once read (the smaller ones cannot).
    if (fixed.exact !== undefined) {
      const bad = data.findIndex((v) => !Number.isSafeInteger(v));
      if (bad >= 0)
        throw notInRange(name, bad, fixed.exact(binary, offset.at + bad * fixed.size), datatype, fixed.range ?? [0, 0]);
    }
    offset.at += n;
    return { name, datatype, shape, data };
  }
  if (!('data' in raw)) throw new OipError(400, `input '${name}': no data and no binary_data_size`);
  if (preset !== undefined) {
    if (preset.length !== count)
      throw new OipError(
        400,
        `input '${name}': shape [${shape.join(',')}] needs ${count} elements, data has ${preset.length}`,
      );
    return { name, datatype, shape, data: preset };
  }
  const data = raw['data'];
  if (!Array.isArray(data)) throw new OipError(400, `input '${name}': data must be an array, got ${kindOf(data)}`);
  // The usual flat array is taken as it is; nested data is flattened row major.
  let flat: unknown[];
  if (!data.some((x) => Array.isArray(x))) flat = data;
  else {
    flat = [];
    flatten(data, flat);
  }
  if (flat.length !== count)
    throw new OipError(
      400,
      `input '${name}': shape [${shape.join(',')}] needs ${count} elements, data has ${flat.length}`,
    );
  const want = datatype === 'BOOL' ? 'boolean' : 'number';
  if (fixed === undefined) throw unreadable(name, datatype, declared);
  for (let k = 0; k < flat.length; k++) {
    if (typeof flat[k] !== want) throw new OipError(400, `input '${name}': element ${k} is not a ${want}`);
  }
  // An integer type's values must be integers it holds: 300 as INT8 or 1.5 as INT32 would be cast by the model's runtime.
  const range = fixed.range;
  if (range !== undefined) {
    for (let k = 0; k < flat.length; k++) {
      const v = flat[k] as number;
      if (!Number.isInteger(v) || v < range[0] || v > range[1]) throw notInRange(name, k, String(v), datatype, range);
    }
  }
  return { name, datatype, shape, data: flat as (number | boolean)[] };
}

/**
 * Decodes a request body. `headerLength` is the `Inference-Header-Content-Length` value (absent
 * for a JSON-only body): the JSON is the body's first `headerLength` bytes, the rest is binary data.
 * With `fastMaxElements` (a tensor model's request, that many elements at most) an FP32 input's
 * JSON numbers may come back as a Float32Array (`fastFp32`). The binary inputs together hold at
 * most `maxBinaryElements` elements (the JSON part is bounded before it is parsed). `declared`
 * gives the model's datatype of an input, for the 400 of a datatype the codec cannot read.
 * `rawBinary` keeps each binary input's bytes as sent (`bytes`) instead of reading its values:
 * a built-in onnx model takes them as they are, 64-bit integers whole.
 */
export function decodeInferRequest(
  body: Buffer,
  headerLength?: number,
  fastMaxElements: number | null = null,
  maxBinaryElements = Number.POSITIVE_INFINITY,
  declared: DeclaredDatatype = () => undefined,
  rawBinary = false,
): InferRequest {
  if (
    headerLength !== undefined &&
    (!Number.isSafeInteger(headerLength) || headerLength < 0 || headerLength > body.length)
  ) {
    throw new OipError(
      400,
      `Inference-Header-Content-Length ${String(headerLength)} is not within the body's ${body.length} bytes`,
    );
  }
  const end = headerLength ?? body.length;
  if (headerLength === undefined && fastMaxElements !== null) {
    const fast = fastFp32(body, fastMaxElements);
    if (fast !== null) return fromParsed(fast.parsed, Buffer.alloc(0), declared, fast.data);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.subarray(0, end).toString('utf8'));
  } catch (e) {
    const reason = jsonErrorReason(e);
    // The header's length cut the JSON: say that the cut, not only the JSON, may be what is wrong.
    if (headerLength !== undefined)
      throw new OipError(
        400,
        `invalid JSON in the inference request's first ${end} bytes (Inference-Header-Content-Length): ${reason}`,
      );
    // Bytes after a whole JSON object are most often binary tensor data sent without the header.
    const hint = /after JSON at position/.test(reason)
      ? '; binary tensor data after the JSON needs the Inference-Header-Content-Length header'
      : '';
    throw new OipError(400, `invalid JSON in the inference request: ${reason}${hint}`);
  }
  return fromParsed(parsed, body.subarray(end), declared, undefined, maxBinaryElements, rawBinary);
}

const DATA_KEY = Buffer.from('"data"');

/**
 * The usual JSON request — one FP32 input whose `data` is a flat array of numbers — without
 * JSON.parse building 784 boxed numbers: the `data` array is decoded straight into a
 * Float32Array (json-tensor.ts, the /predictions decoder), and only the rest (the request with
 * `"data": []`) is parsed. Null whenever that shape is not certain — `"data"` appears more than
 * once, the array is nested, an element is not a number, the input is not FP32 — and the
 * request then takes the general path, which answers it or names what is wrong.
 */
function fastFp32(body: Buffer, maxElements: number): { parsed: unknown; data: Float32Array } | null {
  const at = body.indexOf(DATA_KEY);
  if (at < 0 || body.indexOf(DATA_KEY, at + DATA_KEY.length) >= 0) return null;
  let i = at + DATA_KEY.length;
  while (isJsonSpace(body[i])) i++;
  if (body[i] !== 0x3a) return null;
  i++;
  while (isJsonSpace(body[i])) i++;
  if (body[i] !== 0x5b) return null;
  const open = i;
  let j = open + 1;
  while (isJsonSpace(body[j])) j++;
  if (body[j] === 0x5b) return null; // nested: the general path flattens it
  const close = body.indexOf(0x5d, j);
  if (close < 0) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8', 0, open) + '[]' + body.toString('utf8', close + 1));
  } catch {
    return null;
  }
  const inputs = isObject(parsed) ? parsed['inputs'] : undefined;
  const input: unknown = Array.isArray(inputs) && inputs.length === 1 ? inputs[0] : undefined;
  if (!isObject(input) || input['datatype'] !== 'FP32' || !Array.isArray(input['data']) || input['data'].length !== 0)
    return null;
  const t = decodeJsonTensor(body.subarray(open, close + 1), maxElements);
  if (t.kind === 'json') return null;
  if (t.kind === 'error') throw new OipError(400, `input '${String(input['name'])}': ${t.message}`);
  return { parsed, data: t.data };
}

function isJsonSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The request from its parsed JSON part and its binary part; `preset`: input 0's decoded data. */
function fromParsed(
  parsed: unknown,
  binary: Buffer,
  declared: DeclaredDatatype,
  preset?: Float32Array,
  maxBinaryElements = Number.POSITIVE_INFINITY,
  rawBinary = false,
): InferRequest {
  if (!isObject(parsed)) throw new OipError(400, 'the inference request must be a JSON object');
  const id = parsed['id'];
  if (id !== undefined && typeof id !== 'string') throw new OipError(400, 'id must be a string');
  const inputs = parsed['inputs'];
  if (!Array.isArray(inputs) || inputs.length === 0) throw new OipError(400, 'inputs must be a non-empty array');
  const binaryOutput = flagOf(parametersOf(parsed, ''), 'binary_data_output', '') ?? false;
  const offset = { at: 0 };
  const budget: BinaryBudget = { left: maxBinaryElements, max: maxBinaryElements };
  const decoded = inputs.map((raw, i) =>
    decodeInput(raw, i, binary, offset, budget, declared, i === 0 ? preset : undefined, rawBinary),
  );
  if (offset.at !== binary.length)
    throw new OipError(400, `the body has ${binary.length - offset.at} bytes of binary data no input claims`);
  const outputsRaw = parsed['outputs'];
  let outputs: RequestedOutput[] | undefined;
  if (outputsRaw !== undefined && !Array.isArray(outputsRaw)) throw new OipError(400, 'outputs must be an array');
  // An empty list asks for no output in particular: every output, as Triton and KServe answer it.
  if (Array.isArray(outputsRaw) && outputsRaw.length > 0) {
    // Each output once, Triton's rule: a name repeated 30,000 times in 0.8 MB asked for a 120 MB answer.
    const named = new Set<string>();
    outputs = outputsRaw.map((o, i) => {
      if (!isObject(o) || typeof o['name'] !== 'string') throw new OipError(400, `outputs[${i}].name must be a string`);
      if (named.has(o['name'])) throw new OipError(400, `output '${o['name']}' is requested more than once`);
      named.add(o['name']);
      const where = `output '${o['name']}': `;
      const p = parametersOf(o, where);
      // Triton's top-N classes in place of the tensor: answering the tensor would be a silent wrong shape.
      if (p?.['classification'] !== undefined)
        throw new OipError(
          400,
          `${where}parameters.classification asks for the classification extension, which this server does not have (GET /v2 lists its extensions)`,
        );
      return { name: o['name'], binary: flagOf(p, 'binary_data', where) ?? binaryOutput };
    });
  }
  return {
    ...(id !== undefined ? { id } : {}),
    inputs: decoded,
    ...(outputs !== undefined ? { outputs } : {}),
    binaryOutput,
  };
}
