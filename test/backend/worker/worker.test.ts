import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from '../../../backend/worker/worker.js';
import type { WorkerIo } from '../../../backend/worker/worker.js';
import type { InitMessage, ResultMessage } from '../../../schema/worker-protocol.js';
import { expandDatapoints } from '../../../schema/ipc.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import { modelConfig, testMetricsConfig } from './forked-worker.js';

/** Adds each batch's size to LateCount, answers 1 per request. */
const COUNTING = `exports.handle = (requests, ctx) => {
  ctx.metrics.addCounter('LateCount', requests.length);
  return requests.map(() => 1);
};
`;

/**
 * A Worker driven in process over a fake channel that answers `congested` and never reports a
 * write (as a channel whose reader is behind): every message it was handed, in order.
 */
function driven(dir: string) {
  const sent: unknown[] = [];
  const channel = { congested: false };
  const waiters: { type: string; resolve: (m: unknown) => void }[] = [];
  const io: WorkerIo = {
    send: (original) => {
      // A copy, as process.send serializes: the flush's arrays are views of recycled buffers.
      const msg = structuredClone(original);
      sent.push(msg);
      for (const w of waiters.splice(0)) {
        if ((msg as { type: string }).type === w.type) w.resolve(msg);
        else waiters.push(w);
      }
      return !channel.congested;
    },
    exit: () => undefined,
    log: () => undefined,
  };
  const worker = new Worker(io);
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve) => waiters.push({ type, resolve: resolve as (m: unknown) => void }));
  const init: InitMessage = {
    type: 'tsserve.init',
    v: 1,
    workerId: 'W-test-counting',
    workerIndex: 0,
    model: modelConfig('counting', dir, 'handler.js'),
    metrics: testMetricsConfig(),
  };
  return { worker, sent, channel, next, init };
}

/** LateCount's values in a flush, with each one's request id. */
function lateCounts(msg: MetricsMessage | undefined, ids: Map<number, string>): [number, string | null][] {
  if (msg === undefined) return [];
  for (const s of msg.series) ids.set(s.id, s.metric);
  return expandDatapoints(msg)
    .filter((p) => ids.get(p.seriesId) === 'LateCount')
    .map((p) => [p.value, p.requestId]);
}

describe('Worker', () => {
  let tmp: string;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-worker-inproc-'));
    fs.writeFileSync(path.join(tmp, 'handler.js'), COUNTING);
  });

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // Regression: while the channel was congested a result went without its batch's metrics,
  // which waited in the backlog for the drain; the requests were answered 200 first, and a
  // worker killed before the drain lost the datapoints of requests it had answered.
  it("should carry each batch's metrics in its result while the channel is congested", async () => {
    const { worker, channel, next, init } = driven(tmp);
    const ready = next('tsserve.ready');
    worker.onMessage(init);
    await ready;
    channel.congested = true;
    const results: ResultMessage[] = [];
    for (const [batchId, requestIds] of [
      [1, ['a']],
      [2, ['b', 'c']],
      [3, ['d', 'e', 'f']],
    ] as const) {
      const result = next<ResultMessage>('tsserve.result');
      worker.onMessage({
        type: 'tsserve.batch',
        batchId,
        requests: requestIds.map((requestId) => ({ requestId, body: null })),
      });
      results.push(await result);
    }
    const ids = new Map<number, string>();
    expect(results.map((r) => lateCounts(r.metrics, ids))).to.deep.equal([[[1, 'a']], [[2, 'b,c']], [[3, 'd,e,f']]]);
  });
});
