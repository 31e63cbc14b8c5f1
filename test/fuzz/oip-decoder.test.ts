/**
 * Property tests of the Open Inference Protocol request decoder: whatever body (and
 * Inference-Header-Content-Length) it is given it answers a decoded request or an OipError with
 * a 4xx status and a bounded message, never another throw.
 */
import * as fc from 'fast-check';
import { OipError, decodeInferRequest } from '../../frontend/http/oip/tensor-codec.js';
import { fuzzSettings } from './fuzz-settings.js';

const DATATYPES = [
  'BOOL',
  'UINT8',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'UINT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'fp32',
  '',
];

/** Decodes; true when the outcome is a request or a typed 4xx refusal with a bounded message. */
function typedOutcome(body: Buffer, headerLength?: number, fast: number | null = null): boolean {
  try {
    const r = decodeInferRequest(body, headerLength, fast, 1 << 16);
    return Array.isArray(r.inputs);
  } catch (e) {
    return e instanceof OipError && e.status >= 400 && e.status < 500 && e.message.length <= 1024;
  }
}

/** An input tensor as a client might write it, right or wrong. */
const input = fc.record(
  {
    name: fc.oneof(fc.constant('input'), fc.string({ maxLength: 8 }), fc.integer()),
    datatype: fc.oneof(fc.constantFrom(...DATATYPES), fc.anything()),
    shape: fc.oneof(fc.array(fc.integer({ min: -2, max: 5 }), { maxLength: 4 }), fc.anything()),
    data: fc.oneof(
      fc.array(fc.oneof(fc.double(), fc.integer(), fc.boolean(), fc.string({ maxLength: 3 })), { maxLength: 12 }),
      fc.array(fc.array(fc.integer({ min: -300, max: 300 }), { maxLength: 4 }), { maxLength: 4 }),
      fc.anything(),
    ),
    parameters: fc.oneof(
      fc.constant(undefined),
      fc.record({ binary_data_size: fc.integer({ min: -1, max: 64 }) }),
      fc.anything(),
    ),
  },
  { requiredKeys: ['name', 'datatype', 'shape'] },
);

const request = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 6 }), fc.anything()),
    inputs: fc.oneof(fc.array(input, { maxLength: 3 }), fc.anything()),
    outputs: fc.oneof(
      fc.array(fc.record({ name: fc.string({ maxLength: 4 }), parameters: fc.anything() }), { maxLength: 2 }),
      fc.anything(),
    ),
    parameters: fc.oneof(fc.record({ binary_data_output: fc.anything() }), fc.anything()),
  },
  { requiredKeys: [] },
);

describe('fuzz: the Open Inference Protocol request decoder', () => {
  it('should answer any bytes with a request or a typed 4xx, never another throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.option(fc.integer({ min: -5, max: 400 })), (bytes, h) =>
        typedOutcome(Buffer.from(bytes), h ?? undefined),
      ),
      fuzzSettings(),
    );
  });

  it('should answer JSON requests of right and wrong fields with a request or a typed 4xx, on the fast path too', () => {
    fc.assert(
      fc.property(request, fc.constantFrom(null, 8, 784), (r, fast) =>
        typedOutcome(Buffer.from(JSON.stringify(r)), undefined, fast),
      ),
      fuzzSettings(400),
    );
  });

  it('should answer a JSON header followed by binary data of any length with a request or a typed 4xx', () => {
    fc.assert(
      fc.property(request, fc.uint8Array({ maxLength: 64 }), (r, bin) => {
        const head = Buffer.from(JSON.stringify(r));
        return typedOutcome(Buffer.concat([head, Buffer.from(bin)]), head.length);
      }),
      fuzzSettings(),
    );
  });
});
