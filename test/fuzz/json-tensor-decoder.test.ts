/**
 * Property tests of the JSON tensor decoder (the fast path of `POST /predictions` bodies):
 * whatever bytes it is given it answers a tensor, "not mine, parse it as JSON", or an error
 * with a message, never a throw; and a tensor it answers holds what JSON.parse reads, in float32.
 */
import { expect } from 'chai';
import * as fc from 'fast-check';
import { decodeJsonTensor } from '../../frontend/http/json-tensor.js';
import type { JsonTensor } from '../../frontend/http/json-tensor.js';
import { fuzzSettings } from './fuzz-settings.js';

const MAX_ELEMENTS = 64;

/** A decode that must not throw; its answer checked against JSON.parse of the same text. */
function agreesWithJsonParse(text: string): boolean {
  const r: JsonTensor = decodeJsonTensor(Buffer.from(text, 'utf8'), MAX_ELEMENTS);
  if (r.kind === 'json') return true;
  if (r.kind === 'error') return typeof r.message === 'string' && r.message.length > 0 && r.message.length <= 1024;
  // A tensor: the text is JSON, a flat list of numbers (or {"data"|"input": that list}).
  const parsed = JSON.parse(text) as unknown;
  const list = Array.isArray(parsed)
    ? parsed
    : ((parsed as Record<string, unknown>).data ?? (parsed as Record<string, unknown>).input);
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'number')) return false;
  return list.length === r.data.length && list.every((v, i) => Object.is(Math.fround(v as number), r.data[i]));
}

/** The outcomes of the 500 seed-26 texts (the assertion below shows the new counts when a generator or fast-check changes). */
const KINDS_OF_500 = { tensor: 39, json: 350, error: 111 };

/** A number as a body may write it: valid JSON or nearly (`00`, `1.`, `.5`, `+1`, `1e-400`). */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.integer().map(String),
  fc.constantFrom(
    '-0',
    '0',
    '00',
    '1.',
    '.5',
    '+1',
    '1e-400',
    '1e39',
    '-3.4028235e38',
    '3.4028234663852886e38',
    '1E5',
    '1e+5',
    '-',
    'e1',
    '1e',
    '0x10',
    'NaN',
    'Infinity',
  ),
);

/** A list of numbers with any whitespace, bare or wrapped in {"data"} / {"input"}, sometimes broken. */
const numberish = fc
  .record({
    nums: fc.array(numberText, { maxLength: 12 }),
    space: fc.constantFrom('', ' ', '\n', '\t ', '\r\n'),
    wrap: fc.constantFrom('', 'data', 'input', 'other'),
    tail: fc.constantFrom('', '', '', ',', ']', '}', 'x', ' '),
  })
  .map(({ nums, space, wrap, tail }) => {
    const list = `[${space}${nums.join(`${space},${space}`)}${space}]`;
    return (wrap === '' ? list : `{${space}"${wrap}"${space}:${space}${list}${space}}`) + tail;
  });

describe('fuzz: the JSON tensor decoder', () => {
  it('should answer any bytes with a tensor, json or an error, never a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const r = decodeJsonTensor(bytes, MAX_ELEMENTS);
        return r.kind === 'tensor' || r.kind === 'json' || r.kind === 'error';
      }),
      fuzzSettings(),
    );
  });

  it('should agree with JSON.parse on text built from number-list tokens', () => {
    fc.assert(fc.property(numberish, agreesWithJsonParse), fuzzSettings(400));
  });

  it('should decode any list of doubles within float32 range exactly as Math.fround does, bare and wrapped', () => {
    const doubles = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true, min: -3.4e38, max: 3.4e38 }), {
      maxLength: MAX_ELEMENTS,
    });
    fc.assert(
      fc.property(doubles, fc.constantFrom('bare', 'data', 'input'), (xs, form) => {
        const text = form === 'bare' ? JSON.stringify(xs) : JSON.stringify({ [form]: xs });
        return agreesWithJsonParse(text) && decodeJsonTensor(Buffer.from(text), MAX_ELEMENTS).kind !== 'error';
      }),
      fuzzSettings(),
    );
  });

  it('should reach every outcome from number-list tokens (seed 26: 500 cases)', () => {
    const kinds = { tensor: 0, json: 0, error: 0 };
    for (const text of fc.sample(numberish, { seed: 26, numRuns: 500 }))
      kinds[decodeJsonTensor(Buffer.from(text), MAX_ELEMENTS).kind]++;
    expect(kinds).to.deep.equal(KINDS_OF_500);
  });

  it('should refuse one element past the bound with its count, as the bound says', () => {
    const r = decodeJsonTensor(Buffer.from(JSON.stringify(new Array<number>(MAX_ELEMENTS + 1).fill(0))), MAX_ELEMENTS);
    expect(r).to.deep.equal({ kind: 'error', message: 'JSON body has more than 64 elements (--max-json-elements)' });
  });
});
