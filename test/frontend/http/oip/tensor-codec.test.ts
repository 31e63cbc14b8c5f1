import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { decodeInferRequest, encodeInferResponse, OipError } from '../../../../frontend/http/oip/tensor-codec.js';

/** test/fixtures/oip at the repo root (this file runs from dist/test/frontend/http/oip). */
const FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'test', 'fixtures', 'oip');
const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name));

/** The binary part of the extension's request example: UINT32 [1,2,3,4] then BOOL [true,false,true]. */
const REQUEST_BYTES = Buffer.from([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 1]);
/** The spec's output0, FP32 [3,2] little-endian. */
const OUTPUT0 = [1.0, 1.1, 2.0, 2.1, 3.0, 3.1];
const OUTPUT0_BYTES = Buffer.from([
  0x00, 0x00, 0x80, 0x3f, 0xcd, 0xcc, 0x8c, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x66, 0x66, 0x06, 0x40, 0x00, 0x00, 0x40,
  0x40, 0x66, 0x66, 0x46, 0x40,
]);

function decodeError(body: Buffer, headerLength?: number): [number, string] {
  try {
    decodeInferRequest(body, headerLength);
  } catch (e) {
    if (e instanceof OipError) return [e.status, e.message];
    throw e;
  }
  return [200, ''];
}

describe('decodeInferRequest', () => {
  it("should refuse the specification's JSON example as printed: input1 has shape [3] and one element", () => {
    expect(decodeError(fixture('kserve-infer-request.json'))).to.deep.equal([
      400,
      "input 'input1': shape [3] needs 3 elements, data has 1",
    ]);
  });

  it("should decode the specification's JSON example with input1 given its three elements", () => {
    const text = fixture('kserve-infer-request.json')
      .toString('utf8')
      .replace('"data" : [ true ]', '"data" : [ true, false, true ]');
    expect(decodeInferRequest(Buffer.from(text))).to.deep.equal({
      id: '42',
      inputs: [
        { name: 'input0', datatype: 'UINT32', shape: [2, 2], data: [1, 2, 3, 4] },
        { name: 'input1', datatype: 'BOOL', shape: [3], data: [true, false, true] },
      ],
      outputs: [{ name: 'output0', binary: false }],
      binaryOutput: false,
    });
  });

  it("should flatten nested data in row-major order (the spec's [[1,2],[4,5]])", () => {
    const body = Buffer.from(
      JSON.stringify({
        inputs: [
          {
            name: 'x',
            shape: [2, 2],
            datatype: 'FP32',
            data: [
              [1, 2],
              [4, 5],
            ],
          },
        ],
      }),
    );
    expect(decodeInferRequest(body).inputs[0]?.data).to.deep.equal([1, 2, 4, 5]);
  });

  it("should decode a tensor model's flat FP32 data straight into float32, the rest as JSON.parse gives it", () => {
    const body = Buffer.from(
      '{"id": "7", "inputs": [{"name": "input", "shape": [2, 3], "datatype": "FP32", "data" : [0.1, -2, 3e2, 4, 5.5, 6]}], "outputs": [{"name": "out"}]}',
    );
    const fast = decodeInferRequest(body, undefined, 100);
    const slow = decodeInferRequest(body);
    expect(fast.inputs[0]!.data).to.be.instanceOf(Float32Array);
    expect(slow.inputs[0]!.data).to.be.instanceOf(Array);
    expect({
      ...fast,
      inputs: fast.inputs.map((t) => ({ ...t, data: Array.from(t.data as Float32Array) })),
    }).to.deep.equal({
      ...slow,
      inputs: slow.inputs.map((t) => ({ ...t, data: Array.from(Float32Array.from(t.data as number[])) })),
    });
  });

  it('should leave every other shape of request to the general path, with the same answer or error', () => {
    const fp32 = (data: string, extra = ''): Buffer =>
      Buffer.from(`{${extra}"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":${data}}]}`);
    const cases = [
      fp32('[[1,2]]'), // nested: flattened by the general path
      fp32('[1,"a"]'), // not a number
      fp32('[1,2]', '"\\"data":[9],'), // a key that ends in `"data"`: two occurrences
      Buffer.from('{"inputs":[{"name":"x","shape":[2],"datatype":"INT64","data":[1,2]}]}'), // not FP32
      Buffer.from(
        '{"inputs":[{"name":"a","shape":[1],"datatype":"FP32","data":[1]},{"name":"b","shape":[1],"datatype":"FP32","data":[2]}]}',
      ),
    ];
    const outcome = (body: Buffer, fast: boolean): unknown => {
      try {
        return decodeInferRequest(body, undefined, fast ? 100 : null);
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(cases.map((b) => outcome(b, true))).to.deep.equal(cases.map((b) => outcome(b, false)));
    expect(
      cases
        .map((b) => outcome(b, true))
        .map((o) =>
          typeof o === 'string' ? o : (o as { inputs: { data: unknown }[] }).inputs.every((t) => Array.isArray(t.data)),
        ),
    ).to.deep.equal([true, "input 'x': element 1 is not a number", true, true, true]);
    expect(() => decodeInferRequest(fp32('[1,2,3]'), undefined, 100)).to.throw(
      OipError,
      "input 'x': shape [1,2] needs 2 elements, data has 3",
    );
    expect(() => decodeInferRequest(fp32('[1,1e39]'), undefined, 100)).to.throw(
      OipError,
      "input 'x': element 1 (1e39) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
    );
    expect(() => decodeInferRequest(fp32('[1,2]'), undefined, 1)).to.throw(
      OipError,
      "input 'x': JSON body has more than 1 elements (--max-json-elements)",
    );
  });

  it("should decode the binary extension's request example: JSON header, then 16 + 3 bytes", () => {
    const header = fixture('triton-binary-request.json');
    const body = Buffer.concat([header, REQUEST_BYTES]);
    expect(decodeInferRequest(body, header.length)).to.deep.equal({
      inputs: [
        { name: 'input0', datatype: 'UINT32', shape: [2, 2], data: [1, 2, 3, 4] },
        { name: 'input1', datatype: 'BOOL', shape: [3], data: [true, false, true] },
      ],
      outputs: [{ name: 'output0', binary: true }],
      binaryOutput: false,
    });
  });

  it("should answer 400 with the protocol's reason for every malformed binary request", () => {
    const header = fixture('triton-binary-request.json');
    expect([
      decodeError(Buffer.concat([header, REQUEST_BYTES.subarray(0, 18)]), header.length),
      decodeError(Buffer.concat([header, REQUEST_BYTES, Buffer.from([9])]), header.length),
      decodeError(Buffer.concat([header, REQUEST_BYTES]), header.length + 100),
      decodeError(Buffer.concat([header, REQUEST_BYTES])),
      decodeError(
        Buffer.from(
          '{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":4}}]}\0\0\0\0',
        ),
        91,
      ),
      decodeError(Buffer.from('{"inputs":[]}')),
      decodeError(Buffer.from('{"inputs":[{"name":"x","shape":[1],"datatype":"BYTES","data":["a"]}]}')),
      decodeError(
        Buffer.from(
          '{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1],"parameters":{"binary_data_size":4}}]}\0\0\0\0',
        ),
        102,
      ),
    ]).to.deep.equal([
      [400, "input 'input1': the body holds 2 bytes of binary data, binary_data_size says 3"],
      [400, 'the body has 1 bytes of binary data no input claims'],
      [400, "Inference-Header-Content-Length 575 is not within the body's 494 bytes"],
      [
        400,
        'invalid JSON in the inference request: Unexpected non-whitespace character after JSON at position 475; binary tensor data after the JSON needs the Inference-Header-Content-Length header',
      ],
      [400, "input 'x': binary_data_size 4 does not match shape [2] of FP32 (8 bytes)"],
      [400, 'inputs must be a non-empty array'],
      [400, "input 'x': datatype BYTES is not supported"],
      [400, "input 'x': has both data and parameters.binary_data_size; send one"],
    ]);
  });

  it('should read FP16 (JSON or binary: the route then checks it against the model), refuse BF16 and BYTES sent to an input declared FP32 as a datatype mismatch, and name a misspelt datatype (regression: "datatype FP16 is not supported", where INT8 said the model takes FP32)', () => {
    const declared = (input: string): string | undefined => (input === 'x' ? 'FP32' : undefined);
    const json = (datatype: string, data: unknown[]): Buffer =>
      Buffer.from(JSON.stringify({ inputs: [{ name: 'x', shape: [2], datatype, data }] }));
    const header = Buffer.from(
      JSON.stringify({ inputs: [{ name: 'x', shape: [2], datatype: 'FP16', parameters: { binary_data_size: 4 } }] }),
    );
    const errors = [
      () => decodeInferRequest(json('FP16', [1, 2]), undefined, null, Infinity, declared),
      () => decodeInferRequest(json('BF16', [1, 2]), undefined, 100, Infinity, declared),
      () => decodeInferRequest(json('BYTES', ['a', 'b']), undefined, null, Infinity, declared),
      () => decodeInferRequest(Buffer.concat([header, Buffer.alloc(4)]), header.length, null, Infinity, declared),
      () => decodeInferRequest(json('FP16', [1, 2]), undefined, null, Infinity, () => 'FP16'),
      () => decodeInferRequest(json('fp32', [1, 2]), undefined, null, Infinity, declared),
    ].map((f) => {
      try {
        f();
        return null;
      } catch (e) {
        return e instanceof OipError ? [e.status, e.message] : String(e);
      }
    });
    expect(errors).to.deep.equal([
      null,
      [400, "input 'x': datatype BF16 does not match the model's FP32"],
      [400, "input 'x': datatype BYTES does not match the model's FP32"],
      null,
      null,
      [
        400,
        `input 'x': datatype "fp32" is not one of the protocol's (BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16)`,
      ],
    ]);
  });

  it("should refuse an integer input's value its datatype cannot hold, JSON or binary, naming the element (regression: INT8 300 and 1.5 went to the model, INT64 above 2^53 was rounded)", () => {
    const json = (datatype: string, data: unknown[]): Buffer =>
      Buffer.from(
        JSON.stringify({ inputs: [{ name: 'x', shape: [data.length], datatype, data }] }).replace(
          '"BIG"',
          '9007199254740993',
        ),
      );
    const i64 = Buffer.alloc(16);
    i64.writeBigInt64LE(1n, 0);
    i64.writeBigInt64LE(2n ** 60n, 8);
    const header = Buffer.from(
      JSON.stringify({ inputs: [{ name: 'x', shape: [2], datatype: 'INT64', parameters: { binary_data_size: 16 } }] }),
    );
    const errors = [
      json('INT8', [1, 300]),
      json('INT8', [-129]),
      json('UINT8', [-1]),
      json('INT32', [1.5]),
      json('UINT16', [65536]),
      json('UINT32', [4294967296]),
      json('INT64', ['BIG']),
      Buffer.concat([header, i64]),
    ].map((b, i) => (i === 7 ? decodeError(b, header.length) : decodeError(b)));
    expect(errors).to.deep.equal([
      [400, "input 'x': element 1 (300) is not an INT8 (an integer from -128 to 127)"],
      [400, "input 'x': element 0 (-129) is not an INT8 (an integer from -128 to 127)"],
      [400, "input 'x': element 0 (-1) is not a UINT8 (an integer from 0 to 255)"],
      [400, "input 'x': element 0 (1.5) is not an INT32 (an integer from -2147483648 to 2147483647)"],
      [400, "input 'x': element 0 (65536) is not a UINT16 (an integer from 0 to 65535)"],
      [400, "input 'x': element 0 (4294967296) is not a UINT32 (an integer from 0 to 4294967295)"],
      [
        400,
        "input 'x': element 0 (9007199254740992) is not an INT64 this server carries exactly (an integer from -9007199254740991 to 9007199254740991)",
      ],
      [
        400,
        "input 'x': element 1 (1152921504606846976) is not an INT64 this server carries exactly (an integer from -9007199254740991 to 9007199254740991)",
      ],
    ]);
    expect(decodeInferRequest(json('INT8', [-128, 127])).inputs[0]?.data).to.deep.equal([-128, 127]);
  });

  it("should name Inference-Header-Content-Length when the JSON it cuts does not parse (regression: a header 5 bytes short said only \"Expected ',' or '}' after property value\")", () => {
    const header = fixture('triton-binary-request.json');
    const body = Buffer.concat([header, REQUEST_BYTES]);
    expect([decodeError(body, header.length - 5), decodeError(body, 0)]).to.deep.equal([
      [
        400,
        `invalid JSON in the inference request's first ${header.length - 5} bytes (Inference-Header-Content-Length): Expected ',' or ']' after array element in JSON at position ${header.length - 5}`,
      ],
      [
        400,
        "invalid JSON in the inference request's first 0 bytes (Inference-Header-Content-Length): Unexpected end of JSON input",
      ],
    ]);
  });

  it("should bound the binary inputs' elements together by --max-json-elements, as /predictions binary tensors are (regression: unbounded but for the body size)", () => {
    const header = fixture('triton-binary-request.json');
    const body = Buffer.concat([header, REQUEST_BYTES]);
    expect(decodeInferRequest(body, header.length, null, 7).inputs.map((i) => i.data.length)).to.deep.equal([4, 3]);
    expect(() => decodeInferRequest(body, header.length, null, 6)).to.throw(
      OipError,
      "input 'input1': binary data of 3 elements brings the request to 7, more than 6 (--max-json-elements)",
    );
    expect(() => decodeInferRequest(body, header.length, null, 3)).to.throw(
      OipError,
      "input 'input0': binary data of 4 elements brings the request to 4, more than 3 (--max-json-elements)",
    );
  });

  it('should take an empty outputs list as every output, as Triton and KServe do (regression: a 200 with no outputs after the model ran)', () => {
    const body = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }],
        outputs: [],
        parameters: { binary_data_output: true },
      }),
    );
    expect(decodeInferRequest(body)).to.deep.equal({
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }],
      binaryOutput: true,
    });
  });

  it('should refuse an output requested twice, as Triton does (regression: one name 30,000 times in 0.8 MB got a 120 MB answer)', () => {
    const body = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }],
        outputs: [{ name: 'a' }, { name: 'b' }, { name: 'a', parameters: { binary_data: true } }],
      }),
    );
    expect(() => decodeInferRequest(body)).to.throw(OipError, "output 'a' is requested more than once");
  });

  it('should take binary_data_output for every output, unless an output says otherwise', () => {
    const body = Buffer.from(
      JSON.stringify({
        parameters: { binary_data_output: true },
        inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }],
        outputs: [{ name: 'a' }, { name: 'b', parameters: { binary_data: false } }],
      }),
    );
    const r = decodeInferRequest(body);
    expect([r.binaryOutput, r.outputs]).to.deep.equal([
      true,
      [
        { name: 'a', binary: true },
        { name: 'b', binary: false },
      ],
    ]);
  });
  it('should refuse parameters that are not objects and flags that are not booleans, naming where (regression: ignored, a binary_data_output of "true" answered JSON)', () => {
    const input = { name: 'x', shape: [1], datatype: 'FP32', data: [1] };
    const errors = [
      { parameters: 5, inputs: [input] },
      { inputs: [{ ...input, parameters: 'x' }] },
      { inputs: [input], outputs: [{ name: 'a', parameters: [] }] },
      { parameters: { binary_data_output: 'true' }, inputs: [input] },
      { inputs: [input], outputs: [{ name: 'a', parameters: { binary_data: 1 } }] },
    ].map((r) => decodeError(Buffer.from(JSON.stringify(r))));
    expect(errors).to.deep.equal([
      [400, 'parameters must be an object, got a number'],
      [400, "input 'x': parameters must be an object, got a string"],
      [400, "output 'a': parameters must be an object, got an array"],
      [400, 'parameters.binary_data_output must be true or false, got "true"'],
      [400, "output 'a': parameters.binary_data must be true or false, got 1"],
    ]);
    // null is the field left out, as KServe's own server reads it.
    const body = Buffer.from(
      JSON.stringify({
        parameters: null,
        inputs: [{ ...input, parameters: null }],
        outputs: [{ name: 'a', parameters: { binary_data: null } }],
      }),
    );
    expect(decodeInferRequest(body)).to.deep.equal({
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }],
      outputs: [{ name: 'a', binary: false }],
      binaryOutput: false,
    });
  });

  it("should refuse Triton's classification parameter, an extension GET /v2 does not list (regression: ignored, the raw tensor answered in place of the top classes)", () => {
    const body = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }],
        outputs: [{ name: 'a', parameters: { classification: 3 } }],
      }),
    );
    expect(decodeError(body)).to.deep.equal([
      400,
      "output 'a': parameters.classification asks for the classification extension, which this server does not have (GET /v2 lists its extensions)",
    ]);
  });

  it('should refuse data that is not an array, naming it (regression: data: null was "needs 784 elements, data has 1")', () => {
    expect(
      ['null', '5', '{"a":1}'].map((d) =>
        decodeError(Buffer.from(`{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":${d}}]}`)),
      ),
    ).to.deep.equal([
      [400, "input 'x': data must be an array, got null"],
      [400, "input 'x': data must be an array, got a number"],
      [400, "input 'x': data must be an array, got an object"],
    ]);
  });
});

describe('encodeInferResponse', () => {
  it("should encode the specification's JSON response example to the same JSON", () => {
    const enc = encodeInferResponse({
      id: '42',
      outputs: [{ name: 'output0', shape: [3, 2], datatype: 'FP32', data: OUTPUT0, binary: false }],
    });
    expect(enc.headerLength).to.equal(null);
    expect(enc.body.toString('utf8')).to.equal(
      '{"id":"42","outputs":[{"name":"output0","shape":[3,2],"datatype":"FP32","data":[1,1.1,2,2.1,3,3.1]}]}',
    );
    expect(JSON.parse(enc.body.toString('utf8'))).to.deep.equal(
      JSON.parse(fixture('kserve-infer-response.json').toString('utf8')),
    );
  });

  it("should encode the binary extension's response example: its JSON header, then exactly the 24 bytes of output0", () => {
    const enc = encodeInferResponse({
      outputs: [{ name: 'output0', shape: [3, 2], datatype: 'FP32', data: OUTPUT0, binary: true }],
    });
    const header =
      '{"outputs":[{"name":"output0","shape":[3,2],"datatype":"FP32","parameters":{"binary_data_size":24}}]}';
    expect(enc.headerLength).to.equal(Buffer.byteLength(header));
    expect(enc.body.subarray(0, enc.headerLength ?? 0).toString('utf8')).to.equal(header);
    expect(JSON.parse(header)).to.deep.equal(JSON.parse(fixture('triton-binary-response.json').toString('utf8')));
    expect(enc.body.subarray(enc.headerLength ?? 0).equals(OUTPUT0_BYTES)).to.equal(true);
    expect(enc.body.length).to.equal(header.length + 24);
  });
});
