/**
 * What a worker cache's flush carries (schema/flush/point-buffer.ts, run-list.ts, flusher.ts,
 * driven through the cache as a handler drives it): request ids and times as runs, and the flush.
 */
import { expect } from 'chai';
import { WorkerMetrics } from '../../../backend/metrics/index.js';
import type { MetricsMessage } from '../../../schema/ipc.js';
import { config, spec } from './config.js';
import { setup, wire, points } from './support.js';

describe('the worker cache flush (schema/flush/: point buffer, runs, flusher)', () => {
  describe('request ids', () => {
    it('should stamp the batch ids joined by a comma, prefer an explicit id, else none', () => {
      const { wm, sent } = setup();
      const s = wm.getMetric('NoDims').bind();
      s.record(1);
      wm.setRequestIds(['req-a', 'req-b']);
      s.record(2);
      wm.getMetric('NoDims').addOrUpdate(3, [], 'req-x');
      wm.getMetric('NoDims').addOrUpdate(4);
      wm.flush();
      s.record(5);
      wm.setRequestIds([]);
      s.record(6);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['req-a,req-b', 'req-x']);
      expect(sent[1].requestIds).to.deep.equal(['req-a,req-b']);
      // An explicit id is a one-datapoint run in the middle of the batch's run, which resumes.
      expect(wire(sent[0])[2]).to.deep.equal([0, -1, 1, 0, 2, 1, 3, 0]);
      expect(wire(sent[1])[2]).to.deep.equal([0, 0, 1, -1]);
      expect(points(sent).map((p) => [p[2], p[3]])).to.deep.equal([
        [1, null],
        [2, 'req-a,req-b'],
        [3, 'req-x'],
        [4, 'req-a,req-b'],
        [5, 'req-a,req-b'],
        [6, null],
      ]);
    });
  });

  describe('time', () => {
    it('should stamp the cached clock, refreshed on setRequestIds and flush only (no clock read per record)', () => {
      const { wm, sent, clock } = setup();
      const s = wm.getMetric('NoDims').bind();
      clock.now = 1000;
      s.record(1); // still the construction time
      wm.setRequestIds(['r']);
      clock.now = 2000;
      s.record(2); // 1000, from setRequestIds
      wm.getMetric('NoDims').addOrUpdate(3); // 1000: unbound records read no clock either
      clock.now = 3000;
      s.record(4); // 1000
      wm.flush(); // refresh to 3000
      s.record(5);
      wm.flush();
      expect(points(sent).map((p) => p[4])).to.deep.equal([1_700_000_000_000, 1000, 1000, 1000, 3000]);
      // The time changed mid-flush: a second run from datapoint 1; the next flush starts afresh.
      expect(sent.map((m) => Array.from(m.timeRuns))).to.deep.equal([
        [0, 1_700_000_000_000, 1, 1000],
        [0, 3000],
      ]);
    });
  });

  describe('runs', () => {
    it('should keep runs minimal: a repeated id or time opens none, and a run that got no datapoint is replaced', () => {
      const { wm, sent, clock } = setup();
      const s = wm.getMetric('NoDims').bind();
      const m = wm.getMetric('NoDims');
      wm.setRequestIds(['a']);
      s.record(1);
      wm.setRequestIds(['a']); // same batch ids, same clock: no new run
      m.addOrUpdate(2, [], 'a'); // the explicit id is the batch's: no new run
      m.addOrUpdate(3, [], 'x');
      m.addOrUpdate(4, [], 'x'); // two explicit datapoints in a row: one run
      clock.now = 5;
      wm.setRequestIds(['b']); // no datapoint in this batch: its runs are replaced
      clock.now = 6;
      wm.setRequestIds(['c']);
      s.record(5);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['a', 'x', 'b', 'c']);
      expect(wire(sent[0])).to.deep.equal([
        [0, 0, 0, 0, 0],
        [1, 2, 3, 4, 5],
        [0, 0, 2, 1, 4, 3],
        [0, 1_700_000_000_000, 4, 6],
      ]);
      expect(points(sent).map((p) => [p[2], p[3], p[4]])).to.deep.equal([
        [1, 'a', 1_700_000_000_000],
        [2, 'a', 1_700_000_000_000],
        [3, 'x', 1_700_000_000_000],
        [4, 'x', 1_700_000_000_000],
        [5, 'c', 6],
      ]);
    });

    it('should split runs at the cap: the batch id carries on into the next message, with the refreshed time', () => {
      const { wm, sent, clock } = setup({ maxPointsPerFlush: 4 });
      const s = wm.getMetric('NoDims').bind();
      const m = wm.getMetric('NoDims');
      clock.now = 100;
      wm.setRequestIds(['b']);
      s.record(1);
      m.addOrUpdate(2, [], 'x');
      s.record(3);
      s.record(4); // full
      clock.now = 200;
      s.record(5); // flushes the four first, by itself
      m.addOrUpdate(6, [], 'x');
      s.record(7);
      s.record(8); // full
      m.addOrUpdate(9, [], 'y'); // flushes by itself; an explicit id at the cap
      s.record(10);
      wm.flush();
      expect(sent.map((x) => [x.requestIds, ...wire(x)])).to.deep.equal([
        [
          ['b', 'x'],
          [0, 0, 0, 0],
          [1, 2, 3, 4],
          [0, 0, 1, 1, 2, 0],
          [0, 100],
        ],
        [
          ['b', 'x'],
          [0, 0, 0, 0],
          [5, 6, 7, 8],
          [0, 0, 1, 1, 2, 0],
          [0, 200],
        ],
        [
          ['b', 'y'],
          [0, 0],
          [9, 10],
          [0, 1, 1, 0],
          [0, 200],
        ],
      ]);
      expect(points(sent).map((p) => [p[2], p[3], p[4]])).to.deep.equal([
        [1, 'b', 100],
        [2, 'x', 100],
        [3, 'b', 100],
        [4, 'b', 100],
        [5, 'b', 200],
        [6, 'x', 200],
        [7, 'b', 200],
        [8, 'b', 200],
        [9, 'y', 200],
        [10, 'b', 200],
      ]);
    });

    it('should grow the run arrays past their first size when every datapoint has its own request id', () => {
      const { wm, sent } = setup({ maxPointsPerFlush: 100 });
      const m = wm.getMetric('NoDims');
      wm.setRequestIds(['batch']);
      for (let i = 0; i < 100; i++) m.addOrUpdate(i, [], `r${i % 2}`);
      wm.flush();
      expect(sent[0].requestIds).to.deep.equal(['batch', 'r0', 'r1']);
      expect(Array.from(sent[0].requestRuns)).to.deep.equal(
        Array.from({ length: 100 }, (_, i) => [i, 1 + (i % 2)]).flat(),
      );
      expect(points(sent).map((p) => p[3])).to.deep.equal(Array.from({ length: 100 }, (_, i) => `r${i % 2}`));
    });
  });

  describe('flush', () => {
    it('should send nothing and return 0 when nothing is buffered, and number messages from 0', () => {
      const { wm, sent } = setup();
      expect(wm.flush()).to.equal(0);
      wm.getMetric('NoDims').bind().record(1);
      expect(wm.flush()).to.equal(1);
      wm.getMetric('NoDims').bind().record(1);
      expect(wm.flush()).to.equal(1);
      expect(sent.map((m) => [m.type, m.v, m.seq])).to.deep.equal([
        ['tsserve.metrics', 3, 0],
        ['tsserve.metrics', 3, 1],
      ]);
    });

    it('should grow by doubling up to maxPointsPerFlush, then flush by itself without losing a point', () => {
      const { wm, sent } = setup({ maxPointsPerFlush: 600 });
      const s = wm.getMetric('NoDims').bind();
      for (let i = 1; i <= 1500; i++) s.record(i);
      expect(sent.map((m) => m.values.length)).to.deep.equal([600, 600]);
      expect(wm.flush()).to.equal(300);
      const values = points(sent).map((p) => p[2]);
      expect(values.length).to.equal(1500);
      expect(values.reduce((a, b) => a + b, 0)).to.equal((1500 * 1501) / 2);
      expect(values[0]).to.equal(1);
      expect(values[1499]).to.equal(1500);
    });

    it('should swap two buffers: a sent view stays intact until the next flush, then its buffer is reused', () => {
      const sent: MetricsMessage[] = [];
      const clock = { now: 10 };
      const wm = new WorkerMetrics(config([spec('C', 'counter', 'Count', [])], { maxPointsPerFlush: 4 }), {
        modelName: 'm',
        send: (m) => sent.push(m),
        log: () => undefined,
        nowMs: () => clock.now,
      });
      const s = wm.getMetric('C').bind();
      wm.setRequestIds(['r']);
      s.record(1);
      wm.flush(); // views of the A arrays, 1 datapoint
      clock.now = 20;
      wm.setRequestIds(['q']);
      for (let i = 0; i < 4; i++) s.record(2); // fills the B arrays exactly; A is untouched
      expect(wire(sent[0])).to.deep.equal([[0], [1], [0, 0], [0, 10]]);
      wm.flush(); // hands over B, writes go to A again
      clock.now = 30;
      wm.setRequestIds(['p']);
      s.record(3);
      expect(wire(sent[1])).to.deep.equal([
        [0, 0, 0, 0],
        [2, 2, 2, 2],
        [0, 1],
        [0, 20],
      ]);
      const buffers = (m: MetricsMessage): ArrayBufferLike[] => [
        m.seriesIds.buffer,
        m.values.buffer,
        m.requestRuns.buffer,
        m.timeRuns.buffer,
      ];
      expect(buffers(sent[0]).map((b, i) => b === buffers(sent[1])[i])).to.deep.equal([false, false, false, false]);
      wm.flush();
      expect(buffers(sent[2]).map((b, i) => b === buffers(sent[0])[i])).to.deep.equal([true, true, true, true]);
      expect(wire(sent[0])).to.deep.equal([[0], [3], [0, 1], [0, 30]]); // A recycled
    });

    it('should declare each series once, in the flush that first uses it', () => {
      const { wm, sent } = setup();
      const a = wm.getMetric('HandlerTime').bind(['mlp', 'Model']);
      wm.flush();
      a.record(1);
      wm.getMetric('HandlerTime').addOrUpdate(2, ['mlp', 'Model']);
      wm.flush();
      wm.getMetric('HandlerTime').addOrUpdate(3, ['mlp', 'X']);
      wm.flush();
      expect(sent.map((m) => m.series)).to.deep.equal([
        [{ id: 0, metric: 'HandlerTime', values: ['mlp', 'Model'] }],
        [],
        [{ id: 1, metric: 'HandlerTime', values: ['mlp', 'X'] }],
      ]);
    });

    it('should log and keep going when send throws', () => {
      const logs: string[] = [];
      const wm = new WorkerMetrics(config([spec('C', 'counter', 'Count', [])]), {
        modelName: 'm',
        send: () => {
          throw new Error('channel closed');
        },
        log: (m) => logs.push(m),
      });
      wm.getMetric('C').bind().record(1);
      expect(wm.flush()).to.equal(1);
      expect(logs).to.deep.equal(['[METRICS]Failed to send 1 datapoints to the frontend: channel closed']);
    });
  });
});
