import { expect } from 'chai';
import { spawnSync } from 'node:child_process';

import * as os from 'node:os';
import * as path from 'node:path';
import type { LoadResult, MetricSpec, MetricsConfig } from '../../../../schema/types.js';
import { loadMetricsConfig } from '../../../../schema/config/load.js';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';
import { makeConfig, makeSpec } from '../make-config.js';

const REPO = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..');

function hasPromtool(): boolean {
  return spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
}

/** The repo's metrics.yaml through the real loader when both exist, else a large hand-built config. */
function fullConfig(): { config: MetricsConfig; source: string } {
  const yaml = path.join(REPO, 'metrics.yaml');
  {
    const res: LoadResult = loadMetricsConfig(yaml);
    if (!res.ok) throw new Error(`metrics.yaml does not load: ${JSON.stringify(res.problems)}`);
    return { config: { ...res.config, modes: ['prometheus'] }, source: 'metrics.yaml' };
  }
  const specs: MetricSpec[] = [];
  const ts: [string, readonly string[]][] = [
    ['Requests2XX', ['Level']],
    ['Requests4XX', ['Level']],
    ['Requests5XX', ['Level']],
    ['ts_inference_requests_total', ['model_name', 'model_version']],
    ['ts_inference_latency_microseconds', ['model_name', 'model_version']],
    ['ts_queue_latency_microseconds', ['model_name', 'model_version']],
  ];
  for (const [name, dims] of ts) specs.push(makeSpec(name, 'counter', dims, { hostLabel: 'Hostname', help: `${name} help` }));
  for (const name of ['QueueTime', 'WorkerThreadTime', 'CPUUtilization', 'MemoryUsed', 'DiskAvailable']) {
    specs.push(makeSpec(name, 'gauge', ['Level'], { hostLabel: 'Hostname', unit: 'Milliseconds' }));
  }
  specs.push(makeSpec('GPUUtilization', 'gauge', ['Level', 'DeviceId'], { hostLabel: 'Hostname', unit: 'Percent' }));
  for (const name of ['HandlerTime', 'PredictionTime']) {
    specs.push(makeSpec(name, 'gauge', ['ModelName', 'Level'], { section: 'model_metrics', unit: 'ms' }));
  }
  const buckets = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
  for (const name of [
    'vllm:time_to_first_token_seconds',
    'vllm:inter_token_latency_seconds',
    'vllm:e2e_request_latency_seconds',
    'vllm:request_queue_time_seconds',
  ]) {
    specs.push(makeSpec(name, 'histogram', ['model_name', 'engine'], { unit: 'seconds', buckets, help: 'a "quoted" \\ help\nwith newline' }));
  }
  for (const name of ['vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:num_preemptions_total']) {
    specs.push(makeSpec(name, 'counter', ['model_name', 'engine'], { unit: 'tokens' }));
  }
  for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc']) {
    specs.push(makeSpec(name, 'gauge', ['model_name', 'engine']));
  }
  return { config: makeConfig(specs, { modes: ['prometheus'] }), source: 'hand-built config' };
}

describe('PrometheusSink with promtool', () => {
  it('should render every metric of the full config without a promtool parse error', async function () {
    if (!hasPromtool()) {
      console.warn('SKIPPED: promtool not found; install the Debian package `prometheus` (apt-get install -y prometheus)');
      this.skip();
    }
    const { config, source } = fullConfig();
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'host "1"\\', log: () => {}, processMetrics: true });
    const nasty = ['plain', 'with "quotes"', 'back\\slash', 'new\nline', 'a|b,c:d=e{}'];
    let i = 0;
    for (const spec of config.metrics) {
      for (const v of nasty) {
        const values = spec.dimensions.map((_d, k) => (k === 0 ? v : 'x'));
        fm.get(spec.name)!.addOrUpdate(++i * 0.37, values);
      }
    }
    fm.self.dropped('not_finite');
    fm.self.flushed(1, 5);
    const text = await fm.prometheusText();
    await fm.close();
    const res = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const out = `${res.stdout}${res.stderr}`;
    // promtool exits 3 for lint advice (e.g. TorchServe's counters lack `_total`), 1 for a parse error.
    expect(out, `${source}:\n${out}`).to.not.match(/error while linting|parsing error/i);
    expect([0, 3], `${source}: exit ${res.status}\n${out}`).to.include(res.status);
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE ')).length).to.be.greaterThan(config.metrics.length);
  });
});
