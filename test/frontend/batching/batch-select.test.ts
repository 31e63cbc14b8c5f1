import { expect } from 'chai';
import { keyedBatchReady, selectKeyedBatch } from '../../../frontend/batching/batch-select.js';
import type { Job } from '../../../frontend/batching/job.js';

function slot(id: string, batchKey: string, inputBytes = 10): { job: Job } {
  return { job: { requestId: id, body: null, batchKey, inputBytes, arrivalMs: 0, done: () => undefined } };
}

describe('keyed batch selection', () => {
  const ids = (xs: readonly { job: Job }[]) => xs.map((s) => s.job.requestId);

  it("should take the head's key in queue order up to batchSize and leave the other keys' jobs in place", () => {
    const q = [slot('a1', 'A'), slot('b1', 'B'), slot('a2', 'A'), slot('a3', 'A'), slot('b2', 'B')];
    const r = selectKeyedBatch(q, { batchSize: 2, maxBatchBytes: Infinity }, () => false);
    expect([ids(r.batch), ids(r.rest), ids(r.dropped)]).to.deep.equal([['a1', 'a2'], ['b1', 'a3', 'b2'], []]);
  });

  it('should stop a batch before the job that would pass the byte bound, and drop jobs whose client went', () => {
    const q = [slot('a1', 'A', 40), slot('a2', 'A', 40), slot('a3', 'A', 30), slot('a4', 'A', 10)];
    const r = selectKeyedBatch(q, { batchSize: 8, maxBatchBytes: 80 }, (s) => s.job.requestId === 'a2');
    expect([ids(r.batch), ids(r.rest), ids(r.dropped)]).to.deep.equal([['a1', 'a3', 'a4'], [], ['a2']]);
    const big = selectKeyedBatch(q, { batchSize: 8, maxBatchBytes: 50 }, () => false);
    expect([ids(big.batch), ids(big.rest)]).to.deep.equal([['a1'], ['a2', 'a3', 'a4']]);
  });

  it("should call a batch ready when the head's key fills batchSize or the byte bound, not when other keys do", () => {
    const limits = { batchSize: 3, maxBatchBytes: 100 };
    expect(keyedBatchReady([slot('a', 'A'), slot('b', 'B'), slot('c', 'B'), slot('d', 'B')], limits)).to.equal(false);
    expect(keyedBatchReady([slot('a', 'A'), slot('b', 'B'), slot('c', 'A'), slot('d', 'A')], limits)).to.equal(true);
    expect(keyedBatchReady([slot('a', 'A', 60), slot('b', 'A', 60)], limits)).to.equal(true);
    expect(keyedBatchReady([], limits)).to.equal(false);
  });
});
