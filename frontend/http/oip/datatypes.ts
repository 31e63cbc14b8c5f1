/**
 * The Open Inference Protocol's datatypes as the codec reads them: bytes per element, how to read
 * one little-endian, the values an integer type holds, and the 400s of a datatype or a value the
 * model or the protocol does not take.
 */
import { echoName, echoNumber } from '../../../schema/echo.js';
import { excerpt } from '../../../schema/files/model-file.js';
import { halfToNumber } from '../../../schema/tensors.js';
import { OipError } from './oip-error-class.js';

/** Integers a JS number holds exactly: the range of INT64 and UINT64 values carried here. */
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Bytes per element of each fixed-size datatype, how to read one little-endian, and for an
 * integer type the values it holds (64-bit ones: those a JS number carries exactly, so a larger
 * one is refused rather than rounded); `exact` reads a 64-bit element as its full decimal text.
 */
export const FIXED: Readonly<
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
  FP16: { size: 2, read: (b, at) => halfToNumber(b.readUInt16LE(at)) },
  FP32: { size: 4, read: (b, at) => b.readFloatLE(at) },
  FP64: { size: 8, read: (b, at) => b.readDoubleLE(at) },
};

/** The 400 of an integer element its datatype does not hold (`text`: the value as sent). */
export function notInRange(
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

/** The protocol's datatypes (KServe's table, and Triton's BF16): a misspelt one is named against them, and the OpenAPI documents list them. */
export const DATATYPES = [
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
export function unreadable(input: string, datatype: string, declared: DeclaredDatatype): OipError {
  if (!(DATATYPES as readonly string[]).includes(datatype))
    return new OipError(
      400,
      `input '${echoName(input)}': datatype ${excerpt(datatype)} is not one of the protocol's (${DATATYPES.join(', ')})`,
    );
  const want = declared(input);
  if (want !== undefined && want !== datatype) return new OipError(400, datatypeMismatch(input, datatype, want));
  return new OipError(400, `input '${input}': datatype ${datatype} is not supported`);
}
