import { expect } from 'chai';
import { parseMetricsConfig } from '../../../schema/config/load.js';
import { renderMarkdown, renderTable } from '../../../schema/config/catalog.js';
import {
  metricState,
  resolveStability,
  showHiddenProblem,
  stabilitySummary,
} from '../../../schema/config/stability.js';
import type { MetricsConfig } from '../../../schema/types.js';

const YAML = `
model_metrics:
  counter:
    - name: OldCount
      unit: Count
      help: Requests handled
      deprecated: {since: "0.1", replacement: NewCount}
    - name: NewCount
      unit: Count
      help: Requests handled
    - name: NoticeOnly
      unit: Count
      deprecated: use NewCount instead
    - name: Secret
      unit: Count
      hidden: true
`;

function load(text = YAML): MetricsConfig {
  const r = parseMetricsConfig(text, 'm.yaml');
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.config;
}

function problems(text: string): string[] {
  const r = parseMetricsConfig(text, 'm.yaml');
  return r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col}: ${p.message}`);
}

describe('metric stability (deprecated / hidden)', () => {
  it('should put the deprecation notice first in HELP, for both forms', () => {
    const c = load();
    expect(c.metrics.map((m) => m.help)).to.deep.equal([
      '(Deprecated since 0.1, use NewCount instead) Requests handled',
      'Requests handled',
      '(Deprecated: use NewCount instead) NoticeOnly',
      'Secret',
    ]);
    expect(c.metrics[0]?.deprecated).to.deep.equal({ since: '0.1', replacement: 'NewCount', note: null });
    expect(c.metrics[3]?.hidden).to.equal(true);
  });

  it('should show a deprecated metric for its minor version and the next, then hide it', () => {
    const old = load().metrics[0]!;
    expect(['0.1.0', '0.2.0', '0.3.0', '1.0.0'].map((v) => metricState(old, v))).to.deep.equal([
      'deprecated',
      'deprecated',
      'hidden',
      'hidden',
    ]);
    expect(metricState(old, '0.3.0', '0.2')).to.equal('deprecated');
    expect(metricState(old, '0.4.0', '0.3')).to.equal('hidden');
  });

  it('should never hide the notice-only form by age, and always hide hidden: true', () => {
    const c = load();
    expect(metricState(c.metrics[2]!, '9.9.0')).to.equal('deprecated');
    expect(metricState(c.metrics[3]!, '0.1.0', '0.0')).to.equal('hidden');
  });

  it('should hide from hidden_since on, show it again with the previous minor version, and refuse one before since', () => {
    const c = load(
      'model_metrics:\n  counter:\n    - {name: New, unit: Count}\n    - name: Old\n      unit: Count\n      deprecated: {since: "0.1", replacement: New, hidden_since: "0.1"}\n',
    );
    const old = c.metrics[1]!;
    expect(old.deprecated).to.deep.equal({ since: '0.1', replacement: 'New', note: null, hiddenSince: '0.1' });
    expect([
      metricState(old, '0.1.0'),
      metricState(old, '0.1.0', '0.0'),
      metricState(old, '0.2.0', '0.1'),
    ]).to.deep.equal(['hidden', 'deprecated', 'hidden']);
    expect(
      problems(
        'model_metrics:\n  counter:\n    - name: A\n      unit: Count\n      deprecated: {since: "0.2", hidden_since: "0.1"}\n',
      ),
    ).to.deep.equal([
      '5:48: metric "A" in model_metrics.counter: deprecated.hidden_since 0.1 comes before since 0.2; a metric is hidden at the earliest in the version that deprecates it',
    ]);
  });

  it('should refuse a key used twice and a key that is not dotted lowercase words, with line and column', () => {
    expect(
      problems(
        'model_metrics:\n  counter:\n    - {name: A, key: llm.x, unit: Count}\n    - {name: B, key: llm.x, unit: Count}\n    - {name: C, key: Bad, unit: Count}\n',
      ),
    ).to.deep.equal([
      '4:22: metric "B" in model_metrics.counter: key "llm.x" already names metric "A" in model_metrics.counter at line 3; keys must be unique across the file (the server binds each to one metric), remove or change one',
      '5:22: metric "C" in model_metrics.counter: key "Bad" is not a valid key; use dotted lowercase words, e.g. "llm.time_to_first_token"',
    ]);
  });

  it('should accept only the previous minor version for --show-hidden-metrics-for-version', () => {
    expect(showHiddenProblem('0.3.0', '0.2')).to.equal(null);
    expect(showHiddenProblem('0.3.0', '0.1')).to.equal(
      '--show-hidden-metrics-for-version: 0.1 is not accepted; only 0.2, the previous minor version of tsserve 0.3, is accepted',
    );
    expect(showHiddenProblem('0.3.0', '0.2.1')).to.equal(
      '--show-hidden-metrics-for-version: "0.2.1" is not a version X.Y; only 0.2, the previous minor version of tsserve 0.3, is accepted',
    );
    expect(showHiddenProblem('1.0.0', '0.9')).to.equal(
      '--show-hidden-metrics-for-version: 0.9 is not accepted; tsserve 1.0 has no previous minor version to show hidden metrics for',
    );
  });

  it('should resolve hidden once and summarize deprecated and hidden metrics in one line', () => {
    const at03 = resolveStability(load(), { version: '0.3.0' });
    expect(at03.metrics.map((m) => m.hidden === true)).to.deep.equal([true, false, false, true]);
    expect(Object.isFrozen(at03.metrics[0])).to.equal(true);
    expect(stabilitySummary(at03)).to.equal(
      'metrics: deprecated metrics in use: NoticeOnly (Deprecated: use NewCount instead); ' +
        'hidden metrics (not exposed, logged or sent): OldCount, Secret',
    );
    const shown = resolveStability(load(), { version: '0.3.0', showHiddenForVersion: '0.2' });
    expect(stabilitySummary(shown)).to.equal(
      'metrics: deprecated metrics in use: OldCount (Deprecated since 0.1, use NewCount instead), ' +
        'NoticeOnly (Deprecated: use NewCount instead); hidden metrics (not exposed, logged or sent): Secret',
    );
    const plain = load('model_metrics:\n  counter:\n    - {name: A, unit: Count}\n');
    expect(resolveStability(plain, { version: '0.1.0' })).to.equal(plain);
    expect(stabilitySummary(plain)).to.equal(null);
  });

  it('should show the notice and the hidden state in the catalog (docs/metrics.md)', () => {
    const md = renderMarkdown(resolveStability(load(), { version: '0.3.0' }), 'm.yaml')
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    expect(md).to.deep.equal([
      '| `OldCount` | model_metrics | counter | Count | Hostname *(auto)* | (Hidden) (Deprecated since 0.1, use NewCount instead) Requests handled |  |',
      '| `NewCount` | model_metrics | counter | Count | Hostname *(auto)* | Requests handled |  |',
      '| `NoticeOnly` | model_metrics | counter | Count | Hostname *(auto)* | (Deprecated: use NewCount instead) NoticeOnly |  |',
      '| `Secret` | model_metrics | counter | Count | Hostname *(auto)* | (Hidden) Secret |  |',
    ]);
    expect(renderTable(load()).split('\n')[1]).to.match(
      / \(Deprecated since 0\.1, use NewCount instead\) Requests handled$/,
    );
  });

  it('should report a bad deprecated: with the line, the column and what to write', () => {
    expect(
      problems(`model_metrics:
  counter:
    - name: A
      unit: Count
      deprecated: {since: 0.1, replacement: Nope}
    - name: B
      unit: Count
      deprecated: {since: "1", also: x}
    - name: C
      unit: Count
      deprecated: 3
`),
    ).to.deep.equal([
      '5:27: metric "A" in model_metrics.counter: "since" must be a string, not 0.1; quote it ("0.1") so YAML keeps it a version',
      '5:45: metric "A" in model_metrics.counter: deprecated.replacement "Nope" is not declared in this file; declare the new metric too',
      '8:27: metric "B" in model_metrics.counter: "since" must be a version MAJOR.MINOR such as "0.1" (no patch, no leading zeros), not "1"',
      '8:32: metric "B" in model_metrics.counter: unknown field "deprecated.also"; remove it (allowed: since, replacement, hidden_since)',
      '11:19: metric "C" in model_metrics.counter: "deprecated" must be a notice string or a mapping {since: "X.Y", replacement: NAME}, not 3',
    ]);
  });

  it('should say what to write for a missing since and a patch version (regression: "add it (e.g. name: MyMetric)", "is not valid")', () => {
    expect(
      problems(`model_metrics:
  counter:
    - {name: A, unit: Count, deprecated: {hidden_since: "0.1"}}
    - {name: B, unit: Count, deprecated: {since: "0.1.0", hidden_since: "01.2"}}
`),
    ).to.deep.equal([
      '3:42: metric "A" in model_metrics.counter: missing "since"; add it (e.g. since: "0.1", the quoted version that deprecated the metric)',
      '4:50: metric "B" in model_metrics.counter: "since" must be a version MAJOR.MINOR such as "0.1" (no patch, no leading zeros), not "0.1.0"',
      '4:73: metric "B" in model_metrics.counter: "hidden_since" must be a version MAJOR.MINOR such as "0.1" (no patch, no leading zeros), not "01.2"',
    ]);
  });
});
