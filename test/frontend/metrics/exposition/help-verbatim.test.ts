/** `help_verbatim: true` (the vLLM profile's entries): # HELP is the help exactly, no unit suffix, no deprecation notice. */
import { expect } from 'chai';
import { formatProblem, parseMetricsConfig } from '../../../../schema/config/load.js';
import { prometheusHelp } from '../../../../frontend/metrics/exposition/family.js';
import type { MetricSpec } from '../../../../schema/types.js';

function specs(yaml: string): MetricSpec[] {
  const r = parseMetricsConfig(yaml, 'm.yaml');
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return [...r.config.metrics];
}

describe('help_verbatim', () => {
  it('should render the help exactly with it, and with the unit (and the notice) without it', () => {
    const [verbatim, plain, old] = specs(
      [
        'ts_metrics:',
        '  gauge:',
        '    - name: "vllm:num_requests_running"',
        '      unit: Count',
        '      help: "Number of requests in model execution batches."',
        '      help_verbatim: true',
        '    - name: running',
        '      unit: Count',
        '      help: "Requests running."',
        '    - name: "vllm:gpu_cache_usage_perc"',
        '      unit: Ratio',
        '      help: "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead."',
        '      help_verbatim: true',
        '      deprecated: {since: "0.1", replacement: running}',
        '',
      ].join('\n'),
    );
    expect([prometheusHelp(verbatim!), prometheusHelp(plain!), prometheusHelp(old!)]).to.deep.equal([
      'Number of requests in model execution batches.',
      'Requests running. (unit: Count)',
      'GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.',
    ]);
    expect([verbatim!.helpVerbatim, plain!.helpVerbatim]).to.deep.equal([true, undefined]);
  });

  it('should refuse a help_verbatim that is not a boolean, at its position', () => {
    const r = parseMetricsConfig(
      'ts_metrics:\n  gauge:\n    - name: x\n      unit: Count\n      help_verbatim: "yes"\n',
      'm.yaml',
    );
    expect(r.ok ? [] : r.problems.map(formatProblem)).to.deep.equal([
      'm.yaml:5:22: metric "x" in ts_metrics.gauge: "help_verbatim" must be true or false, not "yes"',
    ]);
  });
});
