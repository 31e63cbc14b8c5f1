/**
 * The flush every process shares (a worker's cache, a front's port): `MetricsFlusher` builds one
 * `MetricsMessage` from the `PointBuffer`, the queued declarations and the `DropLedger`'s
 * deltas, holds back while the channel is congested, and sends what piled up once it drains.
 */
import { expect } from 'chai';
import { DropLedger } from '../../../schema/flush/drop-ledger.js';
import { MetricsFlusher } from '../../../schema/flush/flusher.js';
import type { MetricsSend } from '../../../schema/flush/flusher.js';
import { expandDatapoints } from '../../../schema/ipc.js';
import type { MetricsMessage } from '../../../schema/ipc.js';

/** A message as plain data: its typed arrays read out (they are views of recycled buffers). */
function plain(m: MetricsMessage): object {
  return {
    seq: m.seq,
    metrics: m.metrics,
    series: m.series,
    points: expandDatapoints(m),
    dropped: m.dropped,
    overflowed: m.overflowed,
  };
}

/** A flusher whose sends are kept; `answer` is what the channel says to each send. */
function flusher(maxPoints = 100, answer: () => boolean = () => true) {
  const sent: object[] = [];
  const done: (() => void)[] = [];
  const lines: string[] = [];
  const send: MetricsSend = (m, written) => {
    sent.push(plain(m));
    done.push(written);
    return answer();
  };
  const ledger = new DropLedger((l) => void lines.push(l));
  const f = new MetricsFlusher(
    maxPoints,
    () => 1000,
    send,
    ledger,
    (l) => void lines.push(l),
  );
  return { f, ledger, sent, done, lines };
}

describe('MetricsFlusher', () => {
  it('should send declarations, datapoints and drop deltas as one message, and nothing when nothing is due', () => {
    const { f, ledger, sent } = flusher();
    const id = f.newSeries('Hits', ['m']);
    f.declareMetric({ name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName'] });
    f.buffer.setBatch(['r1', 'r2']);
    f.buffer.push(id, 1);
    f.buffer.push(id, 2);
    ledger.drop('not_finite', 'Hits', 'value NaN is not a finite number');
    ledger.overflowed('Hits');
    expect([f.flush(), f.flush()]).to.deep.equal([2, 0]);
    expect(sent).to.deep.equal([
      {
        seq: 0,
        metrics: [{ name: 'Hits', type: 'counter', unit: 'Count', dimensions: ['ModelName'] }],
        series: [{ id: 0, metric: 'Hits', values: ['m'] }],
        points: [
          { seriesId: 0, value: 1, requestId: 'r1,r2', timeMs: 1000 },
          { seriesId: 0, value: 2, requestId: 'r1,r2', timeMs: 1000 },
        ],
        dropped: { not_finite: 1 },
        overflowed: { Hits: 1 },
      },
    ]);
  });

  it('should hold back while a send waits on a full channel, send the backlog once it is written, and send anyway when forced', () => {
    const answers = [false, true, true];
    const { f, sent, done } = flusher(100, () => answers.shift() ?? true);
    const id = f.newSeries('Hits', []);
    f.buffer.push(id, 1);
    f.flush(); // the channel answers false: congested until this send is written
    f.buffer.push(id, 2);
    expect(f.flush()).to.equal(0);
    expect(sent.length).to.equal(1);
    done[0]!(); // written: the backlog goes out at once
    expect(sent.length).to.equal(2);
    f.buffer.push(id, 3);
    expect(f.flush(true)).to.equal(1);
    expect(sent.map((m) => (m as { points: { value: number }[] }).points.map((p) => p.value))).to.deep.equal([
      [1],
      [2],
      [3],
    ]);
  });

  it('should send through `carry` instead of its own send when given one', () => {
    const { f, sent } = flusher();
    const carried: object[] = [];
    f.buffer.push(f.newSeries('Hits', []), 5);
    f.flush(true, (m) => void carried.push(plain(m)));
    expect([sent.length, carried.length]).to.deep.equal([0, 1]);
  });

  it('should flush by itself when the buffer reaches its cap, so no datapoint is lost', () => {
    const { f, sent } = flusher(4);
    const id = f.newSeries('Hits', []);
    for (let i = 0; i < 10; i++) f.buffer.push(id, i);
    f.flush();
    expect(sent.map((m) => (m as { points: { value: number }[] }).points.map((p) => p.value))).to.deep.equal([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ]);
  });

  it('should count a datapoint that finds the backlog full while congested as ipc_backpressure, warning once', () => {
    const { f, ledger, lines } = flusher(2, () => false);
    const id = f.newSeries('Hits', []);
    f.buffer.push(id, 1);
    f.flush(); // congested from here on
    f.buffer.push(id, 2);
    f.buffer.push(id, 3);
    f.buffer.push(id, 4);
    f.buffer.push(id, 5);
    expect([ledger.totals, lines]).to.deep.equal([
      { ipc_backpressure: 2 },
      [
        '[METRICS]Dropped a datapoint: the IPC channel to the frontend is congested and the backlog is full (ipc_backpressure; further drops of this kind are counted, not logged)',
      ],
    ]);
  });
});
