/**
 * Issue 26 item 1: a declared counter `["Tag", ModelName, Level]` with 10,000 distinct `Tag`
 * values took the worker from 135 MB to a heap-limit crash while `/metrics` held at the cap: the
 * trie made its first d-1 levels before the series-count check. The cap is now checked before
 * any node is made, whichever position varies.
 */
import { expect } from 'chai';
import { createWorkerMetrics } from '../../backend/metrics/index.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import * as os from 'node:os';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../frontend/metrics/ingest.js';
import { config, spec } from '../backend/metrics/config.js';
import { captureLog, makeConfig, makeSpec } from '../frontend/metrics/make-config.js';

type Trie = Map<string, unknown>;

/** Inner Map nodes and leaves of a metric's series trie (read from the private field, as this test is about it). */
function trieSize(metric: unknown): { readonly maps: number; readonly leaves: number } {
  let maps = 0;
  let leaves = 0;
  const walk = (node: Trie): void => {
    maps++;
    for (const v of node.values()) {
      if (v instanceof Map) walk(v as Trie);
      else leaves++;
    }
  };
  walk((metric as { trie: Trie }).trie);
  return { maps, leaves };
}

/** A worker cache with one 3-dimension counter and a series cap of `cap`. */
function setup(dimensions: readonly string[], cap: number) {
  const sent: MetricsMessage[] = [];
  const wm = createWorkerMetrics(
    config([spec('TagCount', 'counter', 'Count', dimensions)], { maxSeriesPerMetric: cap }),
    {
      modelName: 'bomb',
      log: () => undefined,
      nowMs: () => 1_700_000_000_000,
      send: (m, cb) => {
        sent.push(m);
        cb();
        return true;
      },
    },
  );
  return { wm, sent, metric: wm.getMetric('TagCount') };
}

describe('regression: worker series cap bounds the trie (issue 26 item 1)', () => {
  const TAGS = 10_000;
  const CAP = 10;

  it('should make no trie node for any of 10,000 Tag values past the cap when Tag is the first dimension', () => {
    const { wm, sent, metric } = setup(['Tag', 'ModelName', 'Level'], CAP);
    for (let i = 0; i < TAGS; i++) metric.addOrUpdate(1, [`tag-${i}`, 'bomb', 'Model']);
    wm.flush();
    // 10 series: the root, 10 Tag maps and 10 ModelName maps under them, and 10 leaves.
    expect(trieSize(metric)).to.deep.equal({ maps: 1 + CAP + CAP, leaves: CAP });
    expect(sent[0]!.overflowed).to.deep.equal({ TagCount: TAGS - CAP });
    expect(sent[0]!.series.length).to.equal(CAP + 1);
  });

  it('should make no trie node for values past the cap when the varying dimension is in the middle', () => {
    const { metric } = setup(['ModelName', 'Tag', 'Level'], CAP);
    for (let i = 0; i < TAGS; i++) metric.addOrUpdate(1, { ModelName: 'bomb', Tag: `tag-${i}`, Level: 'Model' });
    expect(trieSize(metric)).to.deep.equal({ maps: 1 + 1 + CAP, leaves: CAP });
  });

  it('should make no trie node for values past the cap when the varying dimension is last', () => {
    const { metric } = setup(['ModelName', 'Level', 'Tag'], CAP);
    for (let i = 0; i < TAGS; i++) metric.bind(['bomb', 'Model', `tag-${i}`]).record(1);
    expect(trieSize(metric)).to.deep.equal({ maps: 1 + 1 + 1, leaves: CAP });
  });

  it('should still find the series made before the cap once it is reached', () => {
    const { wm, sent, metric } = setup(['Tag', 'ModelName', 'Level'], 2);
    for (const t of ['a', 'b', 'c', 'a', 'b']) metric.addOrUpdate(1, [t, 'bomb', 'Model']);
    wm.flush();
    expect(sent[0]!.series.map((s) => s.values.join('/'))).to.deep.equal([
      'a/bomb/Model',
      'b/bomb/Model',
      '__overflow__/__overflow__/__overflow__',
    ]);
    expect(sent[0]!.overflowed).to.deep.equal({ TagCount: 1 });
    expect(trieSize(metric)).to.deep.equal({ maps: 5, leaves: 2 });
  });

  it("should keep a worker's series table in the frontend bounded, counting declarations past it as malformed", async () => {
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('TagCount', 'counter', ['Tag'], { section: 'model_metrics' })], { modes: ['prometheus'] }),
      { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log },
    );
    const logs: string[] = [];
    const ingest = new MetricsIngest(fm, { log: (l) => logs.push(l), maxWorkerSeries: 4 });
    ingest.started('bomb-1', { hostname: 'h1' });
    const series = Array.from({ length: 10 }, (_, id) => ({ id, metric: 'TagCount', values: [`t${id}`] }));
    ingest.handle('bomb-1', {
      type: 'tsserve.metrics',
      v: 3,
      seq: 0,
      metrics: [],
      series,
      seriesIds: Uint32Array.from(series.map((s) => s.id)),
      values: Float64Array.from(series.map(() => 1)),
      requestRuns: Int32Array.from([0, -1]),
      requestIds: [],
      timeRuns: Float64Array.from([0, 0]),
      dropped: {},
      overflowed: {},
    });
    const text = await fm.prometheusText(['TagCount', 'tsserve_datapoints_dropped_total'], 'text');
    // 4 series kept; 6 declarations past the bound and their 6 datapoints counted as malformed.
    expect(text.split('\n').filter((l) => /^(TagCount|tsserve_datapoints_dropped_total)\{/.test(l))).to.deep.equal([
      'TagCount{Tag="t0",Hostname="h1"} 1',
      'TagCount{Tag="t1",Hostname="h1"} 1',
      'TagCount{Tag="t2",Hostname="h1"} 1',
      'TagCount{Tag="t3",Hostname="h1"} 1',
      'tsserve_datapoints_dropped_total{reason="malformed_message",Hostname="h1"} 12',
    ]);
    expect(logs[0]).to.equal(
      'metrics: worker bomb-1 declared series id 4, past the 4 one worker may declare; that declaration and its datapoints are dropped; further ones are only counted',
    );
    await fm.close();
  });
});
