/**
 * The status page sampler's own CPU per sample, in process: a metrics cache on the repo's
 * metrics.yaml holding the series `models` served light models leave (requests, restarts, batch
 * sizes, and the inference and management routes' HTTP histograms), a StatusSampler over its
 * cells, and process.cpuUsage around each sample (one a second while a page is open, so CPU ms
 * per sample is CPU ms per second). Baseline, measured alike: rendering the exposition of the
 * families the page shows, which the sampler did every second before it read the cells (it then
 * also parsed the text back, so the baseline understates what it cost).
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { StatusSampler } from '../../frontend/status/status-sampler.js';
import type { DescribedModel } from '../../frontend/status/status-sampler.js';
import { loadMetricsConfig } from '../../schema/config/load.js';

/** The families the page shows of a light-model server (what the previous sampler rendered). */
const PAGE_FAMILIES = [
  'ts_inference_requests_total',
  'http_request_duration_seconds',
  'tsserve_worker_restarts_total',
  'tsserve_sink_errors_total',
  'RequestBatchSize',
];

/** The generation families' yaml keys the page reads. */
const LLM_KEYS = [
  'llm.time_to_first_token',
  'llm.inter_token_latency',
  'llm.num_requests_running',
  'llm.num_requests_waiting',
  'llm.kv_cache_usage',
  'llm.prefix_cache_queries',
  'llm.prefix_cache_hits',
  'llm.generation_tokens',
];

/** The routes a served model's HTTP histogram has series for (inference, management, scrape, page). */
const ROUTES: ReadonlyArray<[string, string]> = [
  ['/predictions/{model}[/{version}]', 'POST'],
  ['/ping', 'GET'],
  ['/models', 'GET'],
  ['/models/{model_name}', 'GET'],
  ['/metrics', 'GET'],
  ['/status.json', 'GET'],
];

/** CPU microseconds `fn` takes, averaged over `n` calls. */
function cpuUsPerCall(n: number, fn: () => unknown): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

/** CPU ms per sample of the sampler and of the exposition render it replaced, with `models` models served. */
export async function samplerCost(models: number, samples: number): Promise<{ ours: number; baseline: number }> {
  const loaded = loadMetricsConfig(path.join(import.meta.dirname, '..', '..', '..', 'metrics.yaml'));
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
  const fm = new FrontendMetrics(loaded.config, { logDir: os.tmpdir(), modes: ['prometheus'], log: () => {} });
  const described: DescribedModel[] = [];
  for (let m = 0; m < models; m++) {
    const name = `mlp${m}`;
    for (let i = 0; i < 100; i++) fm.get('ts_inference_requests_total')!.addOrUpdate(1, [name, '1.0']);
    fm.get('tsserve_worker_restarts_total')!.addOrUpdate(1, [name]);
    fm.get('RequestBatchSize')!.addOrUpdate(32, [name]);
    described.push({
      modelName: name,
      modelVersion: '1.0',
      kind: 'batch',
      handler: 'onnx',
      batchSize: 32,
      workers: [{ id: `W-${m}`, pid: 1000 + m, status: 'READY', startTime: new Date(0).toISOString() }],
      jobQueueStatus: { remainingCapacity: 100, pendingRequests: 0 },
    });
  }
  const http = fm.get('http_request_duration_seconds')!;
  for (const [route, method] of ROUTES)
    for (let i = 0; i < 100; i++) http.addOrUpdate(0.002 * (i % 7), [route, method]);
  // The generation families too, as the previous sampler rendered them (headers only here: no engine).
  const names = [...PAGE_FAMILIES, ...LLM_KEYS.flatMap((k) => fm.byKey(k)?.spec.name ?? [])];
  const cells = fm.cells();
  const sampler = new StatusSampler({
    describe: () => described,
    cells,
    familyName: (key) => fm.byKey(key)?.spec.name ?? null,
    modes: fm.modes,
    version: 'bench',
  });
  await sampler.sample();
  // Both are synchronous: the render's promise resolves with text already built.
  const ours = cpuUsPerCall(samples, () => void sampler.sample());
  const baseline = cpuUsPerCall(samples, () => void fm.prometheusText(names));
  await fm.close();
  return { ours: ours / 1000, baseline: baseline / 1000 };
}
