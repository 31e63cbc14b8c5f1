/** The js-yaml adapter: positions of keys and values, rebuilt from the parser's events. */
import { expect } from 'chai';
import type { DocPath, Locator } from '../../../schema/config/yaml-source.js';
import { MAX_ALIAS_EXPANSION, parseYaml } from '../../../schema/config/yaml-source.js';
import { formatProblem, parseMetricsConfig } from '../../../schema/config/load.js';

function locator(text: string): Locator {
  const r = parseYaml(text);
  if (!r.ok) throw new Error(r.reason);
  return r.locator;
}

const at = (l: Locator, p: DocPath): string => `${l.value(p).line}:${l.value(p).col}`;
const keyAt = (l: Locator, p: DocPath): string => `${l.key(p).line}:${l.key(p).col}`;

describe('parseYaml', () => {
  const text = [
    'dimensions:            # comment',
    '  - &level "Level"',
    'ts_metrics:',
    '  counter:',
    '    - name: A',
    '      "unit": Count',
    '      dimensions: [*level, "x"]',
    '      help:',
    '    - {name: B, unit: ms}',
    '',
  ].join('\n');
  const l = locator(text);

  it('should place values after blanks and comments, at anchors and aliases', () => {
    expect(at(l, ['dimensions'])).to.equal('2:3');
    expect(at(l, ['dimensions', 0])).to.equal('2:5');
    expect(at(l, ['ts_metrics', 'counter', 0])).to.equal('5:7');
    expect(at(l, ['ts_metrics', 'counter', 0, 'name'])).to.equal('5:13');
    expect(at(l, ['ts_metrics', 'counter', 0, 'dimensions', 0])).to.equal('7:20');
    expect(at(l, ['ts_metrics', 'counter', 0, 'dimensions', 1])).to.equal('7:28');
  });

  it('should place keys, quoted ones included', () => {
    expect(keyAt(l, ['ts_metrics'])).to.equal('3:1');
    expect(keyAt(l, ['ts_metrics', 'counter', 0, 'unit'])).to.equal('6:7');
    expect(keyAt(l, ['ts_metrics', 'counter', 1, 'unit'])).to.equal('9:17');
  });

  it('should fall back to the key for an empty value and to the nearest node for a missing path', () => {
    expect(at(l, ['ts_metrics', 'counter', 0, 'help'])).to.equal('8:7');
    expect(at(l, ['ts_metrics', 'counter', 0, 'nope'])).to.equal('5:7');
    expect(at(l, ['ts_metrics', 'gauge', 3])).to.equal('4:3');
  });

  it('should report a syntax error with its 1-based position', () => {
    const r = parseYaml('a: [1, 2\nb: 3\n');
    expect(r.ok).to.equal(false);
    if (!r.ok) expect([r.pos, r.alias]).to.deep.equal([{ line: 2, col: 1 }, null]);
  });

  it('should point an undefined alias at its star', () => {
    const r = parseYaml('x:\n  - [a, *nope]\n');
    expect(r.ok ? null : [r.pos, r.alias]).to.deep.equal([{ line: 2, col: 9 }, 'nope']);
  });

  it('should resolve merge keys and keep `yes` a string (YAML 1.2 core)', () => {
    const r = parseYaml('base: &b {unit: ms}\nm:\n  <<: *b\n  name: A\nflag: yes\n');
    expect(r.ok && r.value).to.deep.equal({ base: { unit: 'ms' }, m: { unit: 'ms', name: 'A' }, flag: 'yes' });
  });
});

// Regression: YAML reads a lone CR as a line break (files from old Mac editors), the positions did
// not: a problem on line 5 was reported at 1:78.
describe('parseYaml line breaks', () => {
  it('should count CR, LF and CRLF line breaks alike', () => {
    const lines = (eol: string): string[] => {
      const text = [
        'ts_metrics:',
        '  counter:',
        '    - name: A',
        '      unit: Count',
        '      dimensions: [x, x]',
        '',
      ].join(eol);
      const r = parseMetricsConfig(text, 'e.yaml');
      return r.ok ? [] : r.problems.map(formatProblem);
    };
    const want = ['e.yaml:5:23: metric "A" in ts_metrics.counter: dimension "x" listed twice; remove the duplicate'];
    expect([lines('\r'), lines('\n'), lines('\r\n')]).to.deep.equal([want, want, want]);
  });
});

describe('parseYaml alias expansion', () => {
  // An anchored list of 999 items is 1000 nodes: each alias of it brings in 999 more.
  const doc = (aliases: number): string =>
    `a: &big [${Array.from({ length: 999 }, () => 'x').join(', ')}]\nb: [${Array.from({ length: aliases }, () => '*big').join(', ')}]\n`;

  it('should accept aliases bringing in MAX_ALIAS_EXPANSION nodes in all', () => {
    expect(MAX_ALIAS_EXPANSION).to.equal(100_000);
    const r = parseYaml(doc(100));
    expect(r.ok && (r.value as { b: unknown[] }).b.length).to.equal(100);
  });

  it('should refuse the alias that takes them past it, at its star', () => {
    const r = parseYaml(doc(101));
    expect(r.ok ? null : [r.pos, r.expansion]).to.deep.equal([
      { line: 2, col: 5 + 6 * 100 },
      { alias: 'big', nodes: 1000 },
    ]);
  });

  // Regression: js-yaml's own cap of 10000 merged keys refused a 97 KB file of 3500 metrics each
  // merging 3 shared keys, as a "YAML syntax error"; MAX_ALIAS_EXPANSION is the bound merges need.
  it('should merge as many keys as the aliases may bring in', () => {
    const items = Array.from({ length: 3500 }, (_, i) => `  - {<<: *c, name: M${i}}`);
    const r = parseYaml(
      ['base: &c {unit: ms, help: shared, dimensions: [ModelName, Level]}', 'list:', ...items, ''].join('\n'),
    );
    const list = r.ok ? (r.value as { list: Array<{ name: string; unit: string }> }).list : [];
    expect([list.length, list[3499]]).to.deep.equal([
      3500,
      { unit: 'ms', help: 'shared', dimensions: ['ModelName', 'Level'], name: 'M3499' },
    ]);
  });

  it('should count a recursive alias as one node', () => {
    const r = parseYaml('a: &r [x, *r]\n');
    expect(r.ok).to.equal(true);
  });
});

describe('parseYaml on js-yaml 5 events', () => {
  it('should name a duplicated mapping key, point at its second occurrence and keep the last value', () => {
    const r = parseYaml(
      [
        'buckets:',
        '  ts_queue_latency_seconds: [1, 2]',
        '  ts_inference_latency_seconds: [1]',
        '  ts_queue_latency_seconds: [3]',
        '',
      ].join('\n'),
    );
    expect(r.ok && [r.duplicates, r.value]).to.deep.equal([
      [{ pos: { line: 4, col: 3 }, key: 'ts_queue_latency_seconds', firstLine: 2, path: ['buckets'] }],
      { buckets: { ts_queue_latency_seconds: [3], ts_inference_latency_seconds: [1] } },
    ]);
  });

  it('should report a duplicated metrics.yaml key as FILE:LINE:COL naming the key, with the other problems', () => {
    const r = parseMetricsConfig('mode: prometheus\nts_metrics: {}\nmode: statsd\nextra: 1\n', 'm.yaml');
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'm.yaml:3:1: top level: key "mode" is given twice in this mapping (first at line 1), and YAML keeps one; remove one',
      'm.yaml:4:1: unknown top-level key "extra"; remove it (allowed: dimensions, ts_metrics, model_metrics, tsserve_metrics, mode, statsd, limits, model_metrics_auto_detect)',
    ]);
  });

  it('should point a duplicated quoted key at its quote, and let merge keys repeat', () => {
    const r = parseYaml('m:\n  - name: A\n    "unit": ms\n    unit: s\nn:\n  <<: {a: 1}\n  <<: {b: 2}\n');
    expect(r.ok && r.duplicates).to.deep.equal([
      { pos: { line: 4, col: 5 }, key: 'unit', firstLine: 3, path: ['m', 0] },
    ]);
  });

  it('should point an undefined alias at its star, in flow and block sequences', () => {
    const flow = parseYaml('dimensions:\n  - &level "Level"\nm:\n  dimensions: [*level, *hostname]\n');
    expect(flow).to.deep.equal({
      ok: false,
      pos: { line: 4, col: 24 },
      reason: 'unidentified alias "hostname"',
      alias: 'hostname',
    });
    const block = parseYaml('m:\n  dimensions:\n    -   *nope\n');
    expect(block).to.deep.equal({
      ok: false,
      pos: { line: 3, col: 9 },
      reason: 'unidentified alias "nope"',
      alias: 'nope',
    });
  });

  it('should resolve merge keys (one or a list, local keys win) and locate the local keys', () => {
    const text = [
      'common: &common {unit: ms, help: shared}',
      'extra: &extra {buckets: [1, 2]}',
      'm:',
      '  <<: [*common, *extra]',
      '  name: A',
      '  unit: s',
      '',
    ].join('\n');
    const r = parseYaml(text);
    if (!r.ok) throw new Error(r.reason);
    expect(r.value).to.deep.equal({
      common: { unit: 'ms', help: 'shared' },
      extra: { buckets: [1, 2] },
      m: { unit: 's', help: 'shared', buckets: [1, 2], name: 'A' },
    });
    expect(keyAt(r.locator, ['m', 'unit'])).to.equal('6:3');
    expect(at(r.locator, ['m', 'unit'])).to.equal('6:9');
    expect(at(r.locator, ['m', '<<', 1])).to.equal('4:17');
    // A merged-in key is not written under m: it points at m (its first key).
    expect(at(r.locator, ['m', 'help'])).to.equal('4:3');
  });

  it('should place block scalars at their indicator and empty sequence items at their dash', () => {
    const l = locator('a: |  # literal\n  x\nb: >-\nc:\n  - one\n  -\n  - two\n');
    expect(at(l, ['a'])).to.equal('1:4');
    expect(at(l, ['b'])).to.equal('3:4');
    expect(at(l, ['c', 1])).to.equal('6:3');
    expect(at(l, ['c', 2])).to.equal('7:5');
  });
});
