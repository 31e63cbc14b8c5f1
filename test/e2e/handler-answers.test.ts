/**
 * A handler's answer that cannot be written as JSON — a BigInt, a cycle (both cross the IPC
 * channel, which is not JSON) — fails its own request with a 500 naming why, on /predictions
 * and on the Open Inference Protocol, and the server keeps serving. (It used to throw in the
 * frontend, outside any handler, and end the process.)
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { mlpInput, post, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

const HANDLERS: Readonly<Record<string, string>> = {
  bigint: 'export function handle(requests) { return requests.map(() => ({ v: 1n })); }\n',
  cycle:
    'export function handle(requests) { return requests.map(() => { const o = { a: 1 }; o.self = o; return o; }); }\n',
  bigarray: 'export function handle(requests) { return requests.map(() => [1n, 2n]); }\n',
  object: 'export function handle(requests) { return requests.map(() => ({ label: 7 })); }\n',
  ragged: 'export function handle(requests) { return requests.map((r) => (r.body[0] === 1 ? [1, 2] : [3])); }\n',
  plain: 'export function handle(requests) { return requests.map((r) => ({ echo: r.body })); }\n',
};

describe('handler answers that are not JSON (real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;

  before(async () => {
    const store = path.join(tempDir('answers'), 'store');
    for (const [name, code] of Object.entries(HANDLERS)) {
      fs.mkdirSync(path.join(store, name), { recursive: true });
      fs.writeFileSync(path.join(store, name, 'handler.mjs'), code);
      fs.writeFileSync(
        path.join(store, name, 'model-config.yaml'),
        'handler: handler.mjs\nbatchSize: 2\nmaxBatchDelay: 20\nminWorkers: 1\nmaxWorkers: 1\n',
      );
    }
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });

  after(async () => {
    await server.stop('SIGTERM');
    removeStores();
  });

  it("should answer 500 naming why for a BigInt or a cycle, answer the batch's other request, and keep serving", async () => {
    const [big, cyc] = await Promise.all([
      post(`${server.inference}/predictions/bigint`, [1]),
      post(`${server.inference}/predictions/cycle`, [2]),
    ]);
    // Two requests in one batch of `plain`, sent while the broken answers are handled.
    const plain = await Promise.all([
      post(`${server.inference}/predictions/plain`, [3]),
      post(`${server.inference}/predictions/plain`, [4]),
    ]);
    const oip = await fetch(`${server.inference}/v2/models/bigarray/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data: [mlpInput(1)] }] }),
    });
    expect([
      [big.status, big.json],
      [cyc.status, cyc.json],
      plain.map((p) => [p.status, p.json]),
      [oip.status, await oip.json()],
      (await fetch(`${server.inference}/ping`)).status,
    ]).to.deep.equal([
      [
        500,
        {
          code: 500,
          type: 'InternalServerException',
          message: "the handler's answer cannot be sent as JSON: Do not know how to serialize a BigInt",
        },
      ],
      [
        500,
        {
          code: 500,
          type: 'InternalServerException',
          message:
            "the handler's answer cannot be sent as JSON: Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    --- property 'self' closes the circle",
        },
      ],
      [
        [200, { echo: [3] }],
        [200, { echo: [4] }],
      ],
      [500, { error: "the handler's answer cannot be encoded: row 0 value 0 is a bigint, not a number" }],
      200,
    ]);
  });

  it('should answer the Open Inference Protocol 500 naming the row when a handler answers something that is not a tensor row', async () => {
    const infer = async (model: string, rows: number[][]): Promise<[number, unknown]> => {
      const r = await fetch(`${server.inference}/v2/models/${model}/infer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          inputs: [{ name: 'input', shape: [rows.length, 2], datatype: 'FP32', data: rows.flat() }],
        }),
      });
      return [r.status, await r.json()];
    };
    expect([
      await infer('object', [[1, 1]]),
      await infer('ragged', [
        [1, 0],
        [2, 0],
      ]),
      await infer('ragged', [
        [1, 0],
        [1, 0],
      ]),
    ]).to.deep.equal([
      [500, { error: "the handler's answer cannot be encoded: row 0 is an object, not an array of numbers" }],
      [500, { error: "the handler's answer cannot be encoded: row 1 has 1 values, row 0 has 2" }],
      [
        200,
        {
          model_name: 'ragged',
          model_version: '1.0',
          outputs: [{ name: 'output0', shape: [2, 2], datatype: 'FP32', data: [1, 2, 1, 2] }],
        },
      ],
    ]);
  });
});
