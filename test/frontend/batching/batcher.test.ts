import { expect } from 'chai';
import { EventEmitter } from 'events';
import type { BatchRequest, ResultMessage } from '../../../schema/worker-protocol.js';
import { Batcher } from '../../../frontend/batching/batcher.js';
import type { BatchRunResult, BatchWorker } from '../../../frontend/batching/batcher.js';
import type { JobOutcome } from '../../../frontend/batching/job.js';
import { FakeClock } from '../../support/fake-clock.js';
import { UnsendableBatchError } from '../../../frontend/batching/unsendable.js';

/** A fake pool whose single worker hands each batch to the test to answer. */
class FakeTarget extends EventEmitter {
  unavailable = false;
  busy = false;
  readonly batches: Array<{
    requests: readonly BatchRequest[];
    resolve(r: BatchRunResult): void;
    reject(e: Error): void;
  }> = [];
  readonly worker: BatchWorker = {
    id: 'W-1',
    runBatch: (requests) => {
      this.busy = true;
      return new Promise<BatchRunResult>((resolve, reject) => {
        this.batches.push({ requests, resolve, reject });
      });
    },
  };
  idleWorker(): BatchWorker | null {
    return this.busy || this.unavailable ? null : this.worker;
  }
  answer(i: number, handlerMs = 0): void {
    const b = this.batches[i];
    this.busy = false;
    const result: ResultMessage = {
      type: 'tsserve.result',
      batchId: i,
      handlerMs,
      responses: b.requests.map((r) => ({ ok: true, body: r.body })),
    };
    b.resolve({ result, wallMs: 2 });
  }
}

/** The clock every Batcher of this file runs on: time moves only when a test advances it. */
let clock = new FakeClock();
beforeEach(() => {
  clock = new FakeClock();
});

function job(
  id: string,
  outcomes: Map<string, JobOutcome>,
): { requestId: string; body: unknown; arrivalMs: number; done(o: JobOutcome): void } {
  return {
    requestId: id,
    body: id,
    arrivalMs: clock.now(),
    done: (o) => {
      outcomes.set(id, o);
    },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  it('should send batchSize requests as one batch as soon as that many are queued', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 3, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    expect(b.submit(job('a', out))).to.equal('queued');
    expect(b.submit(job('b', out))).to.equal('queued');
    expect(t.batches.length).to.equal(0);
    expect(b.submit(job('c', out))).to.equal('queued');
    expect(t.batches.length).to.equal(1);
    expect(t.batches[0].requests.map((r) => r.requestId)).to.deep.equal(['a', 'b', 'c']);
    t.answer(0, 2.5);
    await tick();
    // handlerUs: the batch's handler time, for the Server-Timing header.
    expect(Object.fromEntries(out)).to.deep.equal({
      a: { status: 200, body: 'a', queueUs: 0, handlerUs: 2500 },
      b: { status: 200, body: 'b', queueUs: 0, handlerUs: 2500 },
      c: { status: 200, body: 'c', queueUs: 0, handlerUs: 2500 },
    });
    b.close('end');
  });

  it("should answer the rest of a batch and report the error when one job's done throws", async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const errors: string[] = [];
    const b = new Batcher(
      t,
      { batchSize: 3, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
      (e) => errors.push((e as Error).message),
    );
    b.submit(job('a', out));
    b.submit({
      ...job('b', out),
      done: () => {
        throw new Error('Do not know how to serialize a BigInt');
      },
    });
    b.submit(job('c', out));
    t.answer(0);
    await tick();
    await tick();
    expect([[...out.keys()], errors, b.batchesInFlight]).to.deep.equal([
      ['a', 'c'],
      ['Do not know how to serialize a BigInt'],
      0,
    ]);
    b.close('end');
  });

  it('should send a partial batch once the oldest request has waited maxBatchDelay', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 8, maxBatchDelayMs: 20, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    clock.advance(5);
    b.submit(job('b', out));
    clock.advance(14); // 19 ms after 'a': one short of maxBatchDelay
    expect(t.batches.length).to.equal(0);
    clock.advance(1);
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a', 'b']]);
    t.answer(0);
    await tick();
    expect([out.get('a')?.queueUs, out.get('b')?.queueUs]).to.deep.equal([20_000, 15_000]);
    b.close('end');
  });

  it('should send a waiting partial batch at the new maxBatchDelay after update, not the old one', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 8, maxBatchDelayMs: 3_600_000, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    b.submit(job('b', out)); // same head: the timer armed for 'a' stays
    clock.advance(4);
    b.update({ maxBatchDelayMs: 10 }); // 'a' has waited 4 ms: 6 ms left
    b.submit(job('c', out));
    clock.advance(5);
    expect(t.batches.length).to.equal(0);
    clock.advance(1);
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a', 'b', 'c']]);
    expect(clock.pending).to.equal(3); // the three response timeouts; no delay timer left armed
    b.close('end');
  });

  it('should answer queue_full beyond the queue capacity and unavailable when the pool cannot serve', () => {
    const t = new FakeTarget();
    t.busy = true;
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 1, maxBatchDelayMs: 0, responseTimeoutSec: 60, queueCapacity: 2 },
      undefined,
      clock,
    );
    expect(b.submit(job('a', out))).to.equal('queued');
    expect(b.submit(job('b', out))).to.equal('queued');
    expect(b.submit(job('c', out))).to.equal('queue_full');
    expect(b.queueLength).to.equal(2);
    t.unavailable = true;
    expect(b.submit(job('d', out))).to.equal('unavailable');
    b.close('model gone');
    expect(out.get('a')?.status).to.equal(503);
    expect(out.has('c')).to.equal(false);
  });

  it('should answer every queued request 503 with the message on refuseQueued and keep the batch at the worker', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 1, maxBatchDelayMs: 0, responseTimeoutSec: 60, queueCapacity: 4 },
      undefined,
      clock,
    );
    for (const id of ['a', 'b', 'c']) expect(b.submit(job(id, out))).to.equal('queued');
    expect(t.batches.length).to.equal(1); // 'a' is at the worker, 'b' and 'c' wait
    b.refuseQueued('scaled to 0');
    expect(b.queueLength).to.equal(0);
    const refused = {
      status: 503,
      body: { code: 503, type: 'ServiceUnavailableException', message: 'scaled to 0' },
      queueUs: 0,
    };
    expect(Object.fromEntries(out)).to.deep.equal({ b: refused, c: refused });
    t.answer(0);
    await tick();
    expect(out.get('a')?.status).to.equal(200);
    b.close('end');
  });

  it('should answer 504 when a request is not answered within responseTimeout', async () => {
    const t = new FakeTarget();
    t.busy = true;
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 1, maxBatchDelayMs: 0, responseTimeoutSec: 1, queueCapacity: 2 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    clock.advance(999);
    expect(out.has('a')).to.equal(false);
    expect(b.queueLength).to.equal(1);
    clock.advance(1);
    expect(out.get('a')).to.deep.equal({
      status: 504,
      body: { code: 504, type: 'RequestTimeoutException', message: 'no response within responseTimeout 1 s' },
      queueUs: 0,
    });
    expect(b.queueLength).to.equal(0);
    b.close('end');
  });

  it('should answer every request of a batch with 500 when its worker is lost', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 2, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 4 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    clock.advance(3);
    b.submit(job('b', out));
    t.batches[0].reject(new Error('worker W-1 exited (signal SIGKILL)'));
    await tick();
    const died = {
      code: 500,
      type: 'InternalServerException',
      message: 'Worker died: worker W-1 exited (signal SIGKILL)',
    };
    expect(Object.fromEntries(out)).to.deep.equal({
      a: { status: 500, body: died, queueUs: 3000 },
      b: { status: 500, body: died, queueUs: 0 },
    });
    b.close('end');
  });

  it('should report one QueueTime/WorkerThreadTime pair per batch, worker time net of handlerMs', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const timings: Array<[number, number]> = [];
    const b = new Batcher(
      t,
      { batchSize: 2, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 4 },
      (q, w) => timings.push([q, w]),
      clock,
    );
    b.submit(job('a', out));
    clock.advance(7);
    b.submit(job('b', out));
    t.answer(0, 1e9); // the fake's round trip is 2 ms
    await tick();
    clock.advance(5);
    b.submit(job('c', out));
    b.submit(job('d', out));
    t.answer(1, 0.5);
    await tick();
    // Queue time is the oldest request's wait; worker time is clamped at 0 when handlerMs exceeds the round trip.
    expect(timings).to.deep.equal([
      [7, 0],
      [0, 1.5],
    ]);
    expect(Object.fromEntries([...out].map(([id, o]) => [id, o.queueUs]))).to.deep.equal({ a: 7000, b: 0, c: 0, d: 0 });
    b.close('end');
  });

  it('should resolve drain only after queued and in-flight requests are answered', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 1, maxBatchDelayMs: 0, responseTimeoutSec: 60, queueCapacity: 4 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    b.submit(job('b', out));
    let drained = false;
    const d = b.drain().then(() => {
      drained = true;
    });
    t.answer(0);
    await tick();
    expect(drained).to.equal(false);
    t.answer(1);
    await d;
    expect([...out.keys()].sort()).to.deep.equal(['a', 'b']);
    b.close('end');
  });

  it('should send a partial batch at once, without waiting maxBatchDelay, when draining', () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 8, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    expect(t.batches.length).to.equal(0);
    void b.drain();
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a']]);
    b.close('end');
  });

  it('should drop queued requests whose client has gone instead of sending them to a worker', async () => {
    const t = new FakeTarget();
    t.busy = true;
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 2, maxBatchDelayMs: 0, responseTimeoutSec: 60, queueCapacity: 4 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    b.submit({ ...job('gone', out), cancelled: () => true });
    b.submit(job('c', out));
    t.busy = false;
    t.emit('idle');
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a', 'c']]);
    expect(out.get('gone')?.status).to.equal(503);
    b.close('end');
  });

  it('should send a full batch ahead to a busy worker but keep a partial one queued until a worker is free', async () => {
    const t = new FakeTarget();
    let inFlight = 0;
    // One worker that accepts a batch ahead (depth 2), like WorkerProcess.
    t.idleWorker = (requireEmpty?: boolean) =>
      inFlight >= 2 || (requireEmpty === true && inFlight > 0) ? null : t.worker;
    const run = t.worker.runBatch.bind(t.worker);
    (t.worker as { runBatch: BatchWorker['runBatch'] }).runBatch = (r) => {
      inFlight++;
      return run(r);
    };
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 2, maxBatchDelayMs: 0, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    b.submit(job('a', out)); // partial, worker free: sent at once
    b.submit(job('b', out));
    b.submit(job('c', out)); // full batch [b, c]: sent ahead
    b.submit(job('d', out)); // partial, worker busy: stays queued
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a'], ['b', 'c']]);
    expect(b.queueLength).to.equal(1);
    inFlight--;
    t.answer(0);
    await tick();
    expect(b.queueLength).to.equal(1); // the worker still holds [b, c]
    inFlight--;
    t.answer(1);
    await tick();
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a'], ['b', 'c'], ['d']]);
    b.close('end');
  });

  it('should answer a large batch in request order, a few per event-loop turn, then count it done', async () => {
    const t = new FakeTarget();
    const order: string[] = [];
    const b = new Batcher(
      t,
      { batchSize: 6, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f'])
      b.submit({ requestId: id, body: id, arrivalMs: clock.now(), done: () => order.push(id) });
    const drained = b.drain();
    t.answer(0);
    await new Promise((r) => setImmediate(r)); // the promise callback runs; the first chunk is answered
    expect(order).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(b.batchesInFlight).to.equal(1);
    await drained;
    expect(order).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(b.batchesInFlight).to.equal(0);
    b.close('end');
  });
});

describe('Batcher (a batch that cannot be serialised)', () => {
  it('should fail the request that cannot cross to the worker alone and send the others again', async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 3, maxBatchDelayMs: 60_000, responseTimeoutSec: 600, queueCapacity: 10 },
      undefined,
      clock,
    );
    b.submit(job('a', out));
    b.submit({ ...job('bad', out), body: { f: () => 1 } });
    b.submit(job('c', out));
    // What the real worker does: structured clone refuses the batch, nothing is sent.
    t.busy = false;
    t.batches[0].reject(new UnsendableBatchError('() => 1 could not be cloned.'));
    await tick();
    expect(Object.fromEntries(out)).to.deep.equal({
      bad: {
        status: 500,
        body: {
          code: 500,
          type: 'InternalServerException',
          message: 'the request cannot be sent to a worker: () => 1 could not be cloned.',
        },
        queueUs: 0,
      },
    });
    clock.advance(60_000);
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([
      ['a', 'bad', 'c'],
      ['a', 'c'],
    ]);
    t.answer(1);
    await tick();
    expect([out.get('a')?.status, out.get('c')?.status]).to.deep.equal([200, 200]);
    b.close('end');
  });
});

describe('Batcher with batch keys (built-in onnx jobs)', () => {
  const keyed = (id: string, key: string, out: Map<string, JobOutcome>, inputBytes = 8) => ({
    ...job(id, out),
    batchKey: key,
    inputBytes,
  });

  it("should send a batch when the head's key fills it, leave other keys queued in order, and send those after the delay", async () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 2, maxBatchDelayMs: 20, responseTimeoutSec: 60, queueCapacity: 10 },
      undefined,
      clock,
    );
    for (const [id, key] of [
      ['a1', 'A'],
      ['b1', 'B'],
      ['b2', 'B'],
    ] as const)
      b.submit(keyed(id, key, out));
    // The head's key (A) has one job: nothing is full for it, whatever B holds.
    expect(t.batches.length).to.equal(0);
    b.submit(keyed('a2', 'A', out));
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a1', 'a2']]);
    t.answer(0);
    await tick();
    // B's two jobs are now the head and a full batch.
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
    t.answer(1);
    await tick();
    b.submit(keyed('c1', 'C', out));
    expect(t.batches.length).to.equal(2);
    clock.advance(20);
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))[2]).to.deep.equal(['c1']);
  });

  it('should end a batch before the job that would pass maxBatchBytes', () => {
    const t = new FakeTarget();
    const out = new Map<string, JobOutcome>();
    const b = new Batcher(
      t,
      { batchSize: 8, maxBatchDelayMs: 60_000, responseTimeoutSec: 60, queueCapacity: 10, maxBatchBytes: 100 },
      undefined,
      clock,
    );
    b.submit(keyed('a', 'A', out, 60));
    expect(t.batches.length).to.equal(0);
    b.submit(keyed('b', 'A', out, 60));
    expect(t.batches.map((x) => x.requests.map((r) => r.requestId))).to.deep.equal([['a']]);
    expect(b.queueLength).to.equal(1);
  });
});
