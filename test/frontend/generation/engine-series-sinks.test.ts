/**
 * Issue 4's "every family renders in all three sinks": the repo's metrics.yaml, the real
 * FrontendMetrics with tslog, prometheus and statsd on (statsd to a UDP socket on loopback),
 * one request driven through EngineStats, then every vLLM-style family is looked for in each.
 */
import { expect } from 'chai';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EngineCoreOutputs } from '../../../schema/engine-ipc.js';
import { defaultMetricsConfigPath, loadMetricsConfig } from '../../../schema/config.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { ENGINE_METRICS, bindEngineSeries } from '../../../frontend/generation/engine-series.js';
import { EngineStats } from '../../../frontend/generation/engine-stats.js';
import { until } from '../../support/until.js';

describe('LLM families in every sink (repo metrics.yaml)', () => {
  let dir: string;
  let udp: dgram.Socket;
  const received: string[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-llm-sinks-'));
    udp = dgram.createSocket('udp4');
    udp.on('message', (buf) => {
      for (const l of buf.toString('utf8').split('\n')) if (l !== '') received.push(l);
    });
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  });

  after(() => {
    udp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should render each of the 42 keyed families in tslog, prometheus and statsd', async () => {
    const loaded = loadMetricsConfig(defaultMetricsConfigPath());
    if (!loaded.ok) throw new Error('the repo metrics.yaml does not load');
    const fm = new FrontendMetrics(loaded.config, {
      logDir: dir,
      hostname: 'h',
      modes: ['tslog', 'prometheus', 'statsd'],
      statsd: { host: '127.0.0.1', port: udp.address().port },
      statsdFlushMs: 10,
      log: () => undefined,
    });
    let now = 1000;
    const stats = new EngineStats(
      // With the NaN scan on (VLLM_COMPUTE_NANS_IN_LOGITS=1), so corrupted_requests is registered too.
      bindEngineSeries(
        fm,
        'tiny',
        '0',
        { blockSize: 16, numBlocks: 8, enablePrefixCaching: true },
        undefined,
        true,
        true,
      ),
      () => now,
    );
    stats.addRequest('r1', 1000, 1, 2);
    const gauges = {
      numRunning: 1,
      numWaiting: 0,
      kvCacheUsage: 0.25,
      prefixCacheQueries: 5,
      prefixCacheHits: 0,
      numPreemptions: 1,
      numSteps: 1,
    };
    const step1: EngineCoreOutputs = {
      timestamp: 50,
      numPromptTokens: 5,
      numGenerationTokens: 1,
      outputs: [
        {
          requestId: 'r1',
          index: 0,
          newTokenIds: [65],
          text: 'A',
          events: [
            { type: 'QUEUED', ts: 10 },
            { type: 'SCHEDULED', ts: 20 },
          ],
          prefill: { numPromptTokens: 5, numCachedTokens: 0, numComputedTokens: 5 },
        },
      ],
      stats: {
        ...gauges,
        specDecoding: { numDrafts: 1, numDraftTokens: 2, numAcceptedTokens: 1, numAcceptedTokensPerPos: [1, 0] },
      },
    };
    const step2: EngineCoreOutputs = {
      timestamp: 80,
      numPromptTokens: 0,
      numGenerationTokens: 1,
      outputs: [
        {
          requestId: 'r1',
          index: 0,
          newTokenIds: [66],
          text: 'B',
          events: [],
          finishReason: 'length',
          corrupted: true,
        },
      ],
      stats: {
        ...gauges,
        numRunning: 0,
        kvCacheUsage: 0,
        prefixCacheQueries: 0,
        prefixCacheHits: 16,
        kvEvictions: [{ lifetimeMs: 500, idleMs: 200, reuseGapsMs: [100] }],
        detokenizerFlushes: 2,
        perf: { flops: 3e9, readBytes: 14e6, writeBytes: 9000 },
      },
    };
    now = 1060;
    stats.onStep(step1);
    now = 1090;
    stats.onStep(step2);

    // The families the code fills, as the yaml names them (every key but the vLLM profile's deprecated aliases).
    const names = loaded.config.metrics
      .filter((m) => m.key !== undefined && ENGINE_METRICS[m.key] !== undefined)
      .map((m) => m.name);
    expect(names.length).to.equal(42);
    expect(Object.keys(ENGINE_METRICS).filter((k) => !loaded.config.metrics.some((m) => m.key === k))).to.deep.equal([
      'llm.gpu_cache_usage',
      'llm.time_per_output_token',
    ]);
    const text = await fm.prometheusText(names);
    await fm.close();
    await until(() => names.every((n) => received.some((l) => l.startsWith(`${n}:`))), {
      message: 'a statsd line of every family',
      observe: () => received,
    });
    const tslog = fs.readFileSync(path.join(dir, 'ts_metrics.log'), 'utf8');
    const missing: string[] = [];
    for (const n of names) {
      if (!new RegExp(`^${n}(_bucket|_sum|_count)?\\{`, 'm').test(text)) missing.push(`prometheus ${n}`);
      if (!tslog.includes(` - ${n}.`)) missing.push(`tslog ${n}`);
      if (!received.some((l) => l.startsWith(`${n}:`))) missing.push(`statsd ${n}`);
    }
    expect(missing).to.deep.equal([]);
    // Values, not just presence: the TTFT (frontend clock) and ITL (engine clock) of this request,
    // as StatsD timers in milliseconds; token counts as DogStatsD histograms, never timers.
    expect(received).to.include('ts_time_to_first_token_seconds:60|ms|#model_name:tiny,engine:0');
    expect(received).to.include('ts_inter_token_latency_seconds:30|ms|#model_name:tiny,engine:0');
    expect(received).to.include('ts_request_prompt_tokens:5|h|#model_name:tiny,engine:0');
    expect(text).to.contain('ts_request_success_total{model_name="tiny",engine="0",finished_reason="length"} 1');
    expect(received).to.include('ts_kv_block_lifetime_seconds:500|ms|#model_name:tiny,engine:0');
    expect(received).to.include('ts_kv_block_reuse_gap_seconds:100|ms|#model_name:tiny,engine:0');
    expect(text).to.contain('ts_prompt_tokens_by_source_total{model_name="tiny",engine="0",source="local_compute"} 5');
    expect(text).to.contain('ts_detokenizer_flushes_total{model_name="tiny",engine="0"} 2');
    expect(text).to.contain('ts_corrupted_requests_total{model_name="tiny",engine="0"} 1');
    expect(text).to.contain('ts_estimated_flops_total{model_name="tiny",engine="0"} 3000000000');
    expect(text).to.contain('ts_estimated_write_bytes_total{model_name="tiny",engine="0"} 9000');
    expect(tslog).to.match(
      / - ts_request_inference_time_seconds\.Seconds:0\.06\|#model_name:tiny,engine:0\|#hostname:h,requestID:r1,timestamp:\d+\n/,
    );
  });

  it('should count sampled KV evictions the engine\'s bounded queue dropped in tsserve_datapoints_dropped_total{reason="queue_full"}', async () => {
    const loaded = loadMetricsConfig(defaultMetricsConfigPath());
    if (!loaded.ok) throw new Error('the repo metrics.yaml does not load');
    const fm = new FrontendMetrics(loaded.config, {
      logDir: dir,
      hostname: 'h',
      modes: ['prometheus'],
      log: () => undefined,
    });
    const stats = new EngineStats(
      bindEngineSeries(fm, 'tiny', '0', { blockSize: 16, numBlocks: 8, enablePrefixCaching: true }),
      () => 0,
    );
    const gauges = {
      numRunning: 0,
      numWaiting: 0,
      kvCacheUsage: 0,
      prefixCacheQueries: 0,
      prefixCacheHits: 0,
      numPreemptions: 0,
      numSteps: 1,
    };
    stats.onStep({
      timestamp: 1,
      numPromptTokens: 0,
      numGenerationTokens: 0,
      outputs: [],
      stats: { ...gauges, kvEvictionsDropped: 3 },
    });
    stats.onStep({
      timestamp: 2,
      numPromptTokens: 0,
      numGenerationTokens: 0,
      outputs: [],
      stats: { ...gauges, kvEvictionsDropped: 2 },
    });
    const text = await fm.prometheusText(['tsserve_datapoints_dropped_total']);
    await fm.close();
    expect(text.split('\n').filter((l) => l.includes('queue_full'))).to.deep.equal([
      'tsserve_datapoints_dropped_total{reason="queue_full",Hostname="h"} 5',
    ]);
  });
});
