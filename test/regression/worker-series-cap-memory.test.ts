/**
 * Issue 26 item 1: a declared counter `["Tag", ModelName, Level]` with 10,000 distinct `Tag`
 * values took the worker from 135 MB to a heap-limit crash while `/metrics` held at the cap: the
 * trie made its first d-1 levels before the series-count check. The cap is now checked before
 * any node is made, whichever position varies.
 */
import { expect } from 'chai';
import { createWorkerMetrics } from '../../backend/metrics/index.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import { config, spec } from '../backend/metrics/config.js';

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
});
