/**
 * The metrics config of the generation e2e servers: the repo's metrics.yaml when it declares
 * the engine families, else TorchServe's default catalog plus those families (written to a
 * temp file), so the tests exercise the same shapes either way.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ENGINE_METRICS } from '../../frontend/generation/engine-series.js';

const REPO_YAML = path.resolve(import.meta.dirname, '../../../metrics.yaml');
const TS_DEFAULT = path.resolve(import.meta.dirname, '../../../test/fixtures/torchserve/torchserve-default-metrics.yaml');

const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];
const ONE_TWO_FIVE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
const ITER = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

function buckets(name: string): number[] {
  if (name === 'ts_time_to_first_token_seconds') return TTFT;
  if (name === 'ts_inter_token_latency_seconds' || name === 'ts_request_time_per_output_token_seconds') return ITL;
  if (name === 'ts_iteration_tokens') return ITER;
  if (name === 'ts_request_params_n') return [1, 2, 5, 10, 20];
  if (name.endsWith('_seconds')) return LATENCY;
  return ONE_TWO_FIVE;
}

/** CLI args selecting the config (empty for the repo's own); `cleanup` removes a temp file. */
export function generationConfigArgs(dir: string): string[] {
  if (fs.existsSync(REPO_YAML) && fs.readFileSync(REPO_YAML, 'utf8').includes('ts_request_success_total')) return [];
  const doc = yaml.load(fs.readFileSync(TS_DEFAULT, 'utf8')) as { ts_metrics: Record<string, unknown[]> };
  for (const [name, e] of Object.entries(ENGINE_METRICS)) {
    const entry: Record<string, unknown> = {
      name, unit: name.endsWith('_seconds') ? 'Seconds' : 'Count', dimensions: ['model_name', 'engine', ...e.extra], help: `${name} (e2e fixture)`,
    };
    if (e.type === 'histogram') entry.buckets = buckets(name);
    (doc.ts_metrics[e.type] ??= []).push(entry);
  }
  const file = path.join(dir, 'metrics-generation.yaml');
  fs.writeFileSync(file, yaml.dump(doc, { noRefs: true }));
  return ['--metrics-config', file];
}
