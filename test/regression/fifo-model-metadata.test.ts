/**
 * Issue 26 item 2, on the real server: a FIFO `model.onnx` blocked the frontend 5 s on an
 * unauthenticated `GET /v2/models/{m}` (the ONNX header was read with a synchronous open that
 * waits for a writer). It is now opened without blocking and refused as not a regular file: the
 * metadata answers at once, with no inputs or outputs, and every other port keeps answering.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { call, removeStores, slowModelStore, startTsserve } from '../e2e/harness.js';
import type { Tsserve } from '../e2e/harness.js';

describe('regression: a FIFO model.onnx does not block GET /v2/models/{m} (issue 26 item 2, real tsserve start)', function () {
  this.timeout(60_000);
  let server: Tsserve;
  before(async () => {
    const store = slowModelStore({ fifo: {} });
    // A handler model (its load never opens model.onnx) whose model file is a FIFO nobody writes.
    fs.appendFileSync(path.join(store, 'fifo', 'model-config.yaml'), 'model: model.onnx\n');
    execFileSync('mkfifo', [path.join(store, 'fifo', 'model.onnx')]);
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });
  after(() => {
    server?.kill();
    removeStores();
  });

  it('should answer the metadata without inputs or outputs, and /ping and /metrics alongside it', async () => {
    const [meta, ping, metrics] = await Promise.all([
      call('GET', `${server.inference}/v2/models/fifo`),
      call('GET', `${server.inference}/ping`),
      fetch(`${server.metrics}/metrics`).then((r) => r.status),
    ]);
    expect([meta, ping, metrics]).to.deep.equal([
      {
        status: 200,
        json: { name: 'fifo', versions: ['1.0'], platform: 'tsserve_handler', inputs: [], outputs: [] },
      },
      { status: 200, json: { status: 'Healthy' } },
      200,
    ]);
  });
});
