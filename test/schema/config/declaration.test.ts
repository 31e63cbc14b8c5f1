import { expect } from 'chai';
import { declarationProblems } from '../../../schema/config/declaration.js';
import { parseMetricsConfig } from '../../../schema/config/load.js';

describe('declarationProblems', () => {
  it('should give the exact reason for each bad auto-detected name', () => {
    const one = (name: unknown, dims: readonly unknown[], type: 'counter' | 'histogram' = 'counter'): string[] =>
      declarationProblems({ name, type, dimensions: dims }, true).map((p) => `${String(p.at)} ${p.kind}: ${p.message}`);
    expect(one('bad-name', [])).to.deep.equal([
      'name grammar: name "bad-name" is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. "bad_name"',
    ]);
    expect(one('tsserve_series', [])).to.deep.equal([
      'name reserved: names starting with "tsserve_" are reserved for tsserve\'s self-metrics; rename it (e.g. "series")',
    ]);
    expect(one('__x', [])).to.deep.equal([
      'name reserved: names starting with "__" are reserved by Prometheus; rename it (e.g. "x")',
    ]);
    expect(one('', [])).to.deep.equal([
      'name grammar: "name" is empty; give the metric a name matching [a-zA-Z_:][a-zA-Z0-9_:]*',
    ]);
    expect(one('Lat', ['le', 'quantile', 'Hostname', 'a b', 'le'], 'histogram')).to.deep.equal([
      '0 reserved: dimension "le" is reserved for histogram bucket bounds in Prometheus; rename it',
      '1 reserved: dimension "quantile" is reserved for summary quantiles in Prometheus; rename it',
      '2 reserved: dimension "Hostname" is the automatic hostname label, filled in by the server; leave it out',
      '3 grammar: dimension "a b" is not a valid label name (use letters, digits and _, not starting with a digit), e.g. "a_b"',
      '4 duplicate: dimension "le" listed twice; remove the duplicate',
      '4 reserved: dimension "le" is reserved for histogram bucket bounds in Prometheus; rename it',
    ]);
    expect(one('Good:name', ['ModelName', 'Level'])).to.deep.equal([]);
  });

  it('should only suggest names the loader accepts (not __…, not tsserve_…, not a bare _)', () => {
    // Regression: 名前 was told e.g. "__", é_rate "__rate" and tsserve-x "tsserve_x", each refused in turn; é got "_".
    const yaml =
      'model_metrics:\n  gauge:\n    - {name: "名前", unit: ms}\n    - {name: "é_rate", unit: ms}\n' +
      '    - {name: "tsserve-x", unit: ms}\n    - {name: ok, unit: ms, dimensions: ["é", "a-b"]}\n';
    const r = parseMetricsConfig(yaml, 'm.yaml');
    const grammar = 'is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :';
    expect(r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col}: ${p.message}`)).to.deep.equal([
      `3:14: metric "名前" in model_metrics.gauge: name "名前" ${grammar}, e.g. "my_metric"`,
      `4:14: metric "é_rate" in model_metrics.gauge: name "é_rate" ${grammar}, e.g. "rate"`,
      `5:14: metric "tsserve-x" in model_metrics.gauge: name "tsserve-x" ${grammar}, e.g. "x"`,
      '6:41: metric "ok" in model_metrics.gauge: dimension "é" is not a valid label name (use letters, digits and _, not starting with a digit)',
      '6:46: metric "ok" in model_metrics.gauge: dimension "a-b" is not a valid label name (use letters, digits and _, not starting with a digit), e.g. "a_b"',
    ]);
    expect(
      declarationProblems({ name: 'tsserve-x', type: 'gauge', dimensions: [] }, true).map((p) => p.message),
    ).to.deep.equal([`name "tsserve-x" ${grammar}, e.g. "x"`]);
  });

  it('should suggest an accepted name when removing one reserved start uncovers another (tsserve-tsserve-x, __tsserve_x)', () => {
    // Regression: tsserve-tsserve-x was told "tsserve_x", tsserve-__x "__x", __tsserve_x "tsserve_x", tsserve_9x "9x".
    const eg = (name: string): string[] =>
      declarationProblems({ name, type: 'gauge', dimensions: [] }, true).map(
        (p) => /e\.g\. "([^"]*)"/.exec(p.message)?.[1] ?? p.message,
      );
    expect(
      ['tsserve-tsserve-x', 'tsserve-__x', '__tsserve_x', 'tsserve___x', 'tsserve_9x', 'tsserve_', '__9x', '___'].map(
        eg,
      ),
    ).to.deep.equal([['x'], ['x'], ['x'], ['x'], ['_9x'], ['my_metric'], ['_9x'], ['my_metric']]);
  });

  it('should be the rule the loader applies to yaml entries (hostname allowed there, last)', () => {
    const r = parseMetricsConfig(
      'model_metrics:\n  counter:\n    - {name: __x, unit: Count, dimensions: [quantile, Hostname]}\n',
      'm.yaml',
    );
    expect(r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col}: ${p.message}`)).to.deep.equal([
      '3:14: metric "__x" in model_metrics.counter: names starting with "__" are reserved by Prometheus; rename it (e.g. "x")',
      '3:45: metric "__x" in model_metrics.counter: dimension "quantile" is reserved for summary quantiles in Prometheus; rename it',
    ]);
  });
});
