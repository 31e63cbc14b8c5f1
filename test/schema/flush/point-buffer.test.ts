/**
 * `PointBuffer` is the worker's datapoint store: datapoints as two typed arrays, request refs and
 * times as runs, swapped out whole by `take()`. These tests read what `take()` hands over, exactly,
 * and what a message built from it decodes to.
 */
import { expect } from 'chai';
import { PointBuffer } from '../../../schema/flush/point-buffer.js';
import type { TakenPoints } from '../../../schema/flush/point-buffer.js';
import {
  decodeMetricsMessage,
  expandDatapoints,
  METRICS_IPC_VERSION,
  METRICS_MESSAGE_TYPE,
} from '../../../schema/ipc.js';
import type { MetricsMessage } from '../../../schema/ipc.js';

/** What `take()` handed over, read out of its views (they are reused after the next take). */
function plain(t: TakenPoints): object {
  return {
    seriesIds: Array.from(t.seriesIds),
    values: Array.from(t.values),
    requestRuns: Array.from(t.requestRuns),
    requestIds: [...t.requestIds],
    timeRuns: Array.from(t.timeRuns),
    count: t.count,
  };
}

/** The message a flush builds from `t` (no declarations), checked by the frontend's decoder. */
function message(t: TakenPoints): MetricsMessage {
  const m = decodeMetricsMessage({
    type: METRICS_MESSAGE_TYPE,
    v: METRICS_IPC_VERSION,
    seq: 0,
    metrics: [],
    series: [],
    seriesIds: t.seriesIds,
    values: t.values,
    requestRuns: t.requestRuns,
    requestIds: t.requestIds,
    timeRuns: t.timeRuns,
    dropped: {},
    overflowed: {},
  });
  if ('error' in m) throw new Error(m.error);
  return m;
}

/** A buffer over a settable clock that counts its reads; `onFull` and `onDrop` calls are counted. */
function buffer(maxPoints: number, onFull: (b: PointBuffer) => void = () => {}) {
  const clock = { now: 1000, reads: 0 };
  const calls = { full: 0, drop: 0 };
  const b: PointBuffer = new PointBuffer(
    maxPoints,
    () => {
      calls.full++;
      onFull(b);
    },
    () => {
      clock.reads++;
      return clock.now;
    },
    () => void calls.drop++,
  );
  return { b, clock, calls };
}

describe('PointBuffer', () => {
  it('should hand over the pushed datapoints with one request run (none) and one time run (the clock at construction)', () => {
    const { b } = buffer(100);
    b.push(3, 1.5);
    b.push(4, 2);
    expect(b.count).to.equal(2);
    const t = b.take();
    expect(plain(t)).to.deep.equal({
      seriesIds: [3, 4],
      values: [1.5, 2],
      requestRuns: [0, -1],
      requestIds: [],
      timeRuns: [0, 1000],
      count: 2,
    });
    expect(expandDatapoints(message(t))).to.deep.equal([
      { seriesId: 3, value: 1.5, requestId: null, timeMs: 1000 },
      { seriesId: 4, value: 2, requestId: null, timeMs: 1000 },
    ]);
    expect(b.count).to.equal(0);
  });

  it('should hand over empty arrays and count 0 when nothing was pushed (a valid message)', () => {
    const { b } = buffer(100);
    const t = b.take();
    expect(plain(t)).to.deep.equal({
      seriesIds: [],
      values: [],
      requestRuns: [],
      requestIds: [],
      timeRuns: [],
      count: 0,
    });
    expect(expandDatapoints(message(t))).to.deep.equal([]);
  });

  it('should stamp the batch ids joined with "," and an explicit request id for one point, the batch resuming after it', () => {
    const { b, clock } = buffer(100);
    b.setBatch(['a', 'b']);
    b.push(1, 10);
    b.pushWithRequest(2, 20, 'x');
    b.push(3, 30);
    clock.now = 2000;
    b.tick();
    b.push(4, 40);
    b.setBatch([]);
    b.push(5, 50);
    const t = b.take();
    expect(plain(t)).to.deep.equal({
      seriesIds: [1, 2, 3, 4, 5],
      values: [10, 20, 30, 40, 50],
      requestRuns: [0, 0, 1, 1, 2, 0, 4, -1],
      requestIds: ['a,b', 'x'],
      timeRuns: [0, 1000, 3, 2000],
      count: 5,
    });
    expect(expandDatapoints(message(t))).to.deep.equal([
      { seriesId: 1, value: 10, requestId: 'a,b', timeMs: 1000 },
      { seriesId: 2, value: 20, requestId: 'x', timeMs: 1000 },
      { seriesId: 3, value: 30, requestId: 'a,b', timeMs: 1000 },
      { seriesId: 4, value: 40, requestId: 'a,b', timeMs: 2000 },
      { seriesId: 5, value: 50, requestId: null, timeMs: 2000 },
    ]);
  });

  it('should open no run for what is already in force: the same batch again, the batch id given explicitly, an unchanged clock', () => {
    const { b } = buffer(100);
    b.setBatch(['r1']);
    b.push(1, 1);
    b.setBatch(['r1']);
    b.pushWithRequest(1, 2, 'r1');
    b.tick();
    b.push(1, 3);
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [1, 1, 1],
      values: [1, 2, 3],
      requestRuns: [0, 0],
      requestIds: ['r1'],
      timeRuns: [0, 1000],
      count: 3,
    });
  });

  it('should give one ref per distinct request id within a flush and start the table afresh after a take', () => {
    const { b } = buffer(100);
    b.pushWithRequest(1, 1, 'p');
    b.pushWithRequest(1, 2, 'q');
    b.pushWithRequest(1, 3, 'p');
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [1, 1, 1],
      values: [1, 2, 3],
      requestRuns: [0, 0, 1, 1, 2, 0],
      requestIds: ['p', 'q'],
      timeRuns: [0, 1000],
      count: 3,
    });
    b.pushWithRequest(2, 4, 'q');
    b.push(2, 5);
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [2, 2],
      values: [4, 5],
      requestRuns: [0, 0, 1, -1],
      requestIds: ['q'],
      timeRuns: [0, 1000],
      count: 2,
    });
  });

  it('should carry the batch and the cached time across a take without reading the clock (reads: construction, setBatch, tick only)', () => {
    const { b, clock } = buffer(100);
    expect(clock.reads).to.equal(1);
    clock.now = 1500;
    b.setBatch(['r']);
    expect(clock.reads).to.equal(2);
    b.push(7, 1);
    b.take();
    clock.now = 9999;
    b.push(7, 2);
    b.push(7, 3);
    const t = b.take();
    expect(clock.reads).to.equal(2);
    expect(plain(t)).to.deep.equal({
      seriesIds: [7, 7],
      values: [2, 3],
      requestRuns: [0, 0],
      requestIds: ['r'],
      timeRuns: [0, 1500],
      count: 2,
    });
    b.tick();
    expect(clock.reads).to.equal(3);
    b.push(7, 4);
    expect(plain(b.take())).to.deep.include({ requestRuns: [0, 0], timeRuns: [0, 9999] });
  });

  it('should start at 256 points and grow by doubling up to the cap, without calling onFull', () => {
    const { b, calls } = buffer(1000);
    expect(b.capacity).to.equal(256);
    for (let i = 0; i < 256; i++) b.push(i, i);
    expect(b.capacity).to.equal(256);
    b.push(256, 256);
    expect(b.capacity).to.equal(512);
    for (let i = 257; i < 513; i++) b.push(i, i);
    expect(b.capacity).to.equal(1000);
    expect(calls).to.deep.equal({ full: 0, drop: 0 });
    const t = b.take();
    expect(t.count).to.equal(513);
    expect(Array.from(t.seriesIds)).to.deep.equal(Array.from({ length: 513 }, (_, i) => i));
    expect(Array.from(t.values)).to.deep.equal(Array.from({ length: 513 }, (_, i) => i));
  });

  it('should clamp the cap to a whole number of at least 1 (0 gives 1, 2.9 gives 2, 100 starts at 100)', () => {
    expect([0, 2.9, 100].map((n) => buffer(n).b.capacity)).to.deep.equal([1, 2, 100]);
  });

  it('should call onFull at the cap and keep the point when onFull takes (3 points a flush: 7 pushes, 2 flushes, 1 left)', () => {
    const flushed: object[] = [];
    const { b, calls } = buffer(3, (buf) => void flushed.push(plain(buf.take())));
    for (let i = 1; i <= 7; i++) b.push(i, i * 10);
    expect(calls).to.deep.equal({ full: 2, drop: 0 });
    expect(flushed.map((f) => (f as { seriesIds: number[] }).seriesIds)).to.deep.equal([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [7],
      values: [70],
      requestRuns: [0, -1],
      requestIds: [],
      timeRuns: [0, 1000],
      count: 1,
    });
  });

  it('should stamp a point pushed with a request id after the flush its push triggered in the new flush only', () => {
    const flushed: object[] = [];
    const { b } = buffer(2, (buf) => void flushed.push(plain(buf.take())));
    b.setBatch(['batch']);
    b.push(1, 1);
    b.push(1, 2);
    b.pushWithRequest(1, 3, 'solo');
    expect(flushed).to.deep.equal([
      { seriesIds: [1, 1], values: [1, 2], requestRuns: [0, 0], requestIds: ['batch'], timeRuns: [0, 1000], count: 2 },
    ]);
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [1],
      values: [3],
      requestRuns: [0, 1],
      requestIds: ['batch', 'solo'],
      timeRuns: [0, 1000],
      count: 1,
    });
  });

  it('should drop the point and call onDrop when onFull cannot take (the backlog is full), registering no request id', () => {
    const { b, calls } = buffer(2);
    b.push(1, 1);
    b.push(1, 2);
    b.push(1, 3);
    b.pushWithRequest(1, 4, 'lost');
    expect(calls).to.deep.equal({ full: 2, drop: 2 });
    expect(b.count).to.equal(2);
    expect(plain(b.take())).to.deep.equal({
      seriesIds: [1, 1],
      values: [1, 2],
      requestRuns: [0, -1],
      requestIds: [],
      timeRuns: [0, 1000],
      count: 2,
    });
    b.push(1, 5);
    expect(calls).to.deep.equal({ full: 2, drop: 2 });
    expect(Array.from(b.take().values)).to.deep.equal([5]);
  });

  it('should keep a take valid until the next take and then reuse its arrays (double buffer: no new arrays once both halves exist)', () => {
    const { b } = buffer(4);
    b.push(1, 1);
    const first = b.take();
    b.push(2, 2);
    expect(Array.from(first.values)).to.deep.equal([1]);
    const second = b.take();
    expect(second.values.buffer).to.not.equal(first.values.buffer);
    b.push(3, 3);
    const third = b.take();
    expect(third.values.buffer).to.equal(first.values.buffer);
    expect(third.seriesIds.buffer).to.equal(first.seriesIds.buffer);
    expect(Array.from(third.values)).to.deep.equal([3]);
    expect(Array.from(second.values)).to.deep.equal([2]);
  });
});
