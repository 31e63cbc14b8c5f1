/**
 * The Open Inference Protocol's REST bodies: an inference request as JSON, or as a JSON header
 * followed by raw tensor bytes (the binary tensor data extension: `Inference-Header-Content-Length`
 * gives the header's length, `parameters.binary_data_size` each input's bytes, little-endian,
 * row major, in input order); and the response, JSON or JSON + binary outputs the same way.
 * Everything a client can get wrong is an `OipError` (400) with the protocol's `{"error"}` text.
 */
import { jsonErrorReason } from '../json-error.js';
import { decodeJsonTensor } from '../json-tensor.js';
import { capMessage, echoName, echoNumber } from '../../../schema/echo.js';
import { excerpt } from '../../../schema/files/model-file.js';

/** A request the protocol rejects: HTTP status and the `error` message. */
export class OipError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    // Capped once here: a refusal echoing an input name, datatype or shape stays bounded.
    super(capMessage(message));
  }
}

/** Integers a JS number holds exactly: the range of INT64 and UINT64 values carried here. */
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Bytes per element of each fixed-size datatype, how to read one little-endian, and for an
 * integer type the values it holds (64-bit ones: those a JS number carries exactly, so a larger
 * one is refused rather than rounded); `exact` reads a 64-bit element as its full decimal text.
 */
const FIXED: Readonly<
  Record<
    string,
    {
      readonly size: number;
      readonly read: (b: Buffer, at: number) => number | boolean;
      readonly range?: readonly [number, number];
      readonly exact?: (b: Buffer, at: number) => string;
    }
  >
> = {
  BOOL: { size: 1, read: (b, at) => b[at] !== 0 },
  UINT8: { size: 1, read: (b, at) => b.readUInt8(at), range: [0, 255] },
  UINT16: { size: 2, read: (b, at) => b.readUInt16LE(at), range: [0, 65535] },
  UINT32: { size: 4, read: (b, at) => b.readUInt32LE(at), range: [0, 4294967295] },
  UINT64: {
    size: 8,
    read: (b, at) => Number(b.readBigUInt64LE(at)),
    range: [0, SAFE],
    exact: (b, at) => String(b.readBigUInt64LE(at)),
  },
  INT8: { size: 1, read: (b, at) => b.readInt8(at), range: [-128, 127] },
  INT16: { size: 2, read: (b, at) => b.readInt16LE(at), range: [-32768, 32767] },
  INT32: { size: 4, read: (b, at) => b.readInt32LE(at), range: [-2147483648, 2147483647] },
  INT64: {
    size: 8,
    read: (b, at) => Number(b.readBigInt64LE(at)),
    range: [-SAFE, SAFE],
    exact: (b, at) => String(b.readBigInt64LE(at)),
  },
  FP32: { size: 4, read: (b, at) => b.readFloatLE(at) },
  FP64: { size: 8, read: (b, at) => b.readDoubleLE(at) },
};

/** The 400 of an integer element its datatype does not hold (`text`: the value as sent). */
function notInRange(
  input: string,
  k: number,
  text: string,
  datatype: string,
  [min, max]: readonly [number, number],
): OipError {
  const what = datatype.endsWith('64') ? `${datatype} this server carries exactly` : datatype;
  return new OipError(
    400,
    `input '${input}': element ${k} (${echoNumber(text)}) is not ${datatype.startsWith('I') ? 'an' : 'a'} ${what} (an integer from ${min} to ${max})`,
  );
}

/** The protocol's datatypes (KServe's table, and Triton's BF16), for naming a misspelt one. */
const DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'BF16',
] as const;

/** The datatype a model declares for an input, undefined when it declares none or no such input. */
export type DeclaredDatatype = (input: string) => string | undefined;

/** The 400 of an input whose datatype is not the model's: one text, whether the codec or the route finds it. */
export function datatypeMismatch(input: string, got: string, want: string): string {
  return `input '${input}': datatype ${got} does not match the model's ${want}`;
}

/**
 * The 400 of a datatype with no reader here: a name the protocol does not have (`fp32`), else
 * the model's own datatype when it declares another (FP16 sent to an FP32 model is the client's
 * choice to change, not a missing feature), else the missing reader.
 */
function unreadable(input: string, datatype: string, declared: DeclaredDatatype): OipError {
  if (!(DATATYPES as readonly string[]).includes(datatype))
    return new OipError(
      400,
      `input '${echoName(input)}': datatype ${excerpt(datatype)} is not one of the protocol's (${DATATYPES.join(', ')})`,
    );
  const want = declared(input);
  if (want !== undefined && want !== datatype) return new OipError(400, datatypeMismatch(input, datatype, want));
  return new OipError(400, `input '${input}': datatype ${datatype} is not supported`);
}

/** One decoded input tensor; `data` is flat, row major. */
export interface InputTensor {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  /** Flat, row major; a Float32Array when the fast JSON path decoded an FP32 input's numbers. */
  readonly data: readonly (number | boolean)[] | Float32Array;
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
 */
export function decodeInferRequest(
  body: Buffer,
  headerLength?: number,
  fastMaxElements: number | null = null,
  maxBinaryElements = Number.POSITIVE_INFINITY,
  declared: DeclaredDatatype = () => undefined,
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
  return fromParsed(parsed, body.subarray(end), declared, undefined, maxBinaryElements);
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
    decodeInput(raw, i, binary, offset, budget, declared, i === 0 ? preset : undefined),
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

/** One output tensor of a response (FP32: the server's models answer float32). */
export interface OutputTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly datatype: 'FP32';
  readonly data: ArrayLike<number>;
  readonly binary: boolean;
}

/** A response to encode. */
export interface InferResponse {
  readonly model_name?: string;
  readonly model_version?: string;
  readonly id?: string;
  readonly outputs: readonly OutputTensor[];
}

/** An encoded response: the body, and the JSON header's length when binary data follows it. */
export interface EncodedResponse {
  readonly body: Buffer;
  readonly headerLength: number | null;
}

/** Encodes a response: outputs with `binary` go after the JSON as little-endian bytes, in order. */
export function encodeInferResponse(r: InferResponse): EncodedResponse {
  const chunks: Buffer[] = [];
  const outputs = r.outputs.map((o) => {
    if (!o.binary) return { name: o.name, shape: o.shape, datatype: o.datatype, data: Array.from(o.data) };
    const bytes = Buffer.alloc(o.data.length * 4);
    for (let k = 0; k < o.data.length; k++) bytes.writeFloatLE(o.data[k] as number, k * 4);
    chunks.push(bytes);
    return { name: o.name, shape: o.shape, datatype: o.datatype, parameters: { binary_data_size: bytes.length } };
  });
  const json = Buffer.from(
    JSON.stringify({
      ...(r.model_name !== undefined ? { model_name: r.model_name } : {}),
      ...(r.model_version !== undefined ? { model_version: r.model_version } : {}),
      ...(r.id !== undefined ? { id: r.id } : {}),
      outputs,
    }),
    'utf8',
  );
  if (chunks.length === 0) return { body: json, headerLength: null };
  return { body: Buffer.concat([json, ...chunks]), headerLength: json.length };
}
