import { expect } from 'chai';
import { BatchDebugLog, batchDebugLine } from '../../../frontend/batching/batch-debug-log.js';
import type { BatchDone } from '../../../frontend/batching/batch-debug-log.js';

/** A batch of `n` requests answered 200, but the second 400 when there are three or more. */
function batch(n: number): BatchDone {
  const ids = Array.from({ length: n }, (_, i) => `r${i}`);
  return {
    workerId: 'mlp-1',
    requestIds: ids,
    result: {
      responses: ids.map((_id, i) =>
        n >= 3 && i === 1 ? { ok: false as const, status: 400, message: 'bad' } : { ok: true as const, body: 1 },
      ),
      handlerMs: 5.04,
    },
    queueMs: 4.12,
    wallMs: 6.25,
  };
}

describe('batch debug lines (--log-level debug)', () => {
  it('should say which requests a batch held, on which worker, their statuses and where the time went', () => {
    expect(batchDebugLine('mlp', batch(1))).to.equal(
      'model mlp: batch of 1 (id r0) on worker mlp-1: status 200; waited 4.1 ms in the queue (the oldest), worker 6.3 ms, handler 5 ms',
    );
    expect(batchDebugLine('mlp', batch(4))).to.equal(
      'model mlp: batch of 4 (ids r0, r1, r2, r3) on worker mlp-1: statuses 200, 400, 200 ×2; waited 4.1 ms in the queue (the oldest), worker 6.3 ms, handler 5 ms',
    );
  });

  it('should name at most 16 ids of a batch, and a missing response as 500', () => {
    const b = batch(40);
    const line = batchDebugLine('mlp', { ...b, result: { ...b.result, responses: b.result.responses.slice(0, 39) } });
    expect(line).to.equal(
      `model mlp: batch of 40 (ids ${Array.from({ length: 16 }, (_, i) => `r${i}`).join(', ')}, …(24 more)) on worker mlp-1: statuses 200, 400, 200 ×37, 500; waited 4.1 ms in the queue (the oldest), worker 6.3 ms, handler 5 ms`,
    );
  });

  it('should write at most 10 lines a second and say, in the next line, how many it left out', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new BatchDebugLog('mlp', (l) => lines.push(l), { now: () => now });
    for (let i = 0; i < 25; i++) log.batch(batch(1));
    expect(lines.length).to.equal(10);
    now = 999;
    log.batch(batch(1));
    expect(lines.length).to.equal(10);
    now = 1000;
    log.batch(batch(1));
    expect(lines.length).to.equal(11);
    expect(lines[10]).to.equal(
      `${batchDebugLine('mlp', batch(1))} (16 batch lines left out before this one: at most 10 a second)`,
    );
  });
});
