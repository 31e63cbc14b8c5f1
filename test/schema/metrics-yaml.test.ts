/** The repo's metrics.yaml: TorchServe's default catalog unchanged, plus the LLM block. */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { MetricsConfig } from '../../schema/types.js';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { defaultHelp } from '../../schema/config/normalize.js';

const TORCHSERVE_DEFAULT = path.resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'test',
  'fixtures',
  'torchserve',
  'torchserve-default-metrics.yaml',
);
const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const REQUEST = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];
const ONE_TWO_FIVE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

function load(file: string): MetricsConfig {
  const r = loadMetricsConfig(file);
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return r.config;
}

describe('metrics.yaml (repo root)', () => {
  const config = load(defaultMetricsConfigPath());
  const byName = new Map(config.metrics.map((m) => [m.name, m]));

  it("should declare TorchServe's default catalog with the same sections, types, units and dimensions", () => {
    const shape = (c: MetricsConfig, names: ReadonlySet<string>) =>
      c.metrics
        .filter((m) => names.has(m.name))
        .map((m) => ({
          name: m.name,
          section: m.section,
          type: m.type,
          unit: m.unit,
          dimensions: m.dimensions,
          hostLabel: m.hostLabel,
        }));
    const ts = load(TORCHSERVE_DEFAULT);
    const names = new Set(ts.metrics.map((m) => m.name));
    expect(names.size).to.equal(21);
    expect(shape(config, names)).to.deep.equal(shape(ts, names));
  });

  it('should give every metric its own help text', () => {
    const missing = config.metrics.filter((m) => m.help === defaultHelp(m.name)).map((m) => m.name);
    expect(missing).to.deep.equal([]);
  });

  it("should declare the LLM block with vLLM's labels and bucket lists", () => {
    const llm = config.metrics.filter(
      (m) =>
        m.name.startsWith('ts_') &&
        !m.name.startsWith('ts_inference') &&
        !m.name.startsWith('ts_queue') &&
        !m.name.startsWith('ts_omni_') &&
        // The image classifier's and the embeddings' families are not the LLM block.
        !m.name.startsWith('ts_image_') &&
        !m.name.startsWith('ts_embedding_'),
    );
    expect(
      llm.map((m) => `${m.type} ${m.name} ${m.unit} [${m.dimensions.join(',')}] ${m.buckets.join(',')}`),
    ).to.deep.equal([
      'counter ts_prompt_tokens_total Tokens [model_name,engine] ',
      'counter ts_generation_tokens_total Tokens [model_name,engine] ',
      'counter ts_request_success_total Count [model_name,engine,finished_reason] ',
      'counter ts_num_preemptions_total Count [model_name,engine] ',
      'counter ts_detokenizer_flushes_total Count [model_name,engine] ',
      'counter ts_prefix_cache_queries_total Tokens [model_name,engine] ',
      'counter ts_prefix_cache_hits_total Tokens [model_name,engine] ',
      'counter ts_prompt_tokens_by_source_total Tokens [model_name,engine,source] ',
      'counter ts_prompt_tokens_cached_total Tokens [model_name,engine] ',
      'counter ts_prompt_tokens_recomputed_total Tokens [model_name,engine] ',
      'counter ts_corrupted_requests_total Count [model_name,engine] ',
      'counter ts_estimated_flops_total Count [model_name,engine] ',
      'counter ts_estimated_read_bytes_total Bytes [model_name,engine] ',
      'counter ts_estimated_write_bytes_total Bytes [model_name,engine] ',
      'counter ts_spec_decode_num_drafts_total Count [model_name,engine] ',
      'counter ts_spec_decode_num_draft_tokens_total Tokens [model_name,engine] ',
      'counter ts_spec_decode_num_accepted_tokens_total Tokens [model_name,engine] ',
      'counter ts_spec_decode_num_accepted_tokens_per_pos_total Tokens [model_name,engine,position] ',
      'gauge ts_num_requests_running Count [model_name,engine] ',
      'gauge ts_num_requests_waiting Count [model_name,engine] ',
      'gauge ts_num_requests_waiting_by_reason Count [model_name,engine,reason] ',
      'gauge ts_engine_sleep_state Count [model_name,engine,sleep_state] ',
      'gauge ts_kv_cache_usage_ratio Ratio [model_name,engine] ',
      'gauge ts_cache_config_info Count [model_name,engine,block_size,num_blocks,enable_prefix_caching] ',
      `histogram ts_time_to_first_token_seconds Seconds [model_name,engine] ${TTFT.join(',')}`,
      `histogram ts_inter_token_latency_seconds Seconds [model_name,engine] ${ITL.join(',')}`,
      `histogram ts_request_time_per_output_token_seconds Seconds [model_name,engine] ${ITL.join(',')}`,
      `histogram ts_e2e_request_latency_seconds Seconds [model_name,engine] ${REQUEST.join(',')}`,
      `histogram ts_request_queue_time_seconds Seconds [model_name,engine] ${REQUEST.join(',')}`,
      `histogram ts_request_prefill_time_seconds Seconds [model_name,engine] ${REQUEST.join(',')}`,
      `histogram ts_request_decode_time_seconds Seconds [model_name,engine] ${REQUEST.join(',')}`,
      `histogram ts_request_inference_time_seconds Seconds [model_name,engine] ${REQUEST.join(',')}`,
      `histogram ts_request_prompt_tokens Tokens [model_name,engine] ${ONE_TWO_FIVE.join(',')}`,
      `histogram ts_request_generation_tokens Tokens [model_name,engine] ${ONE_TWO_FIVE.join(',')}`,
      `histogram ts_request_params_max_tokens Tokens [model_name,engine] ${ONE_TWO_FIVE.join(',')}`,
      `histogram ts_request_max_num_generation_tokens Tokens [model_name,engine] ${ONE_TWO_FIVE.join(',')}`,
      'histogram ts_iteration_tokens Tokens [model_name,engine] 1,8,16,32,64,128,256,512,1024,2048,4096,8192,16384',
      'histogram ts_request_params_n Count [model_name,engine] 1,2,5,10,20',
      'histogram ts_request_prefill_kv_computed_tokens Tokens [model_name,engine] 1,2,5,10,20,50,100,200,500,1000,2000,5000,10000',
      'histogram ts_kv_block_lifetime_seconds Seconds [model_name,engine] 0.001,0.002,0.005,0.01,0.02,0.05,0.1,0.2,0.5,1,2,5,10,20,30,60,120,300,600,1200,1800',
      'histogram ts_kv_block_idle_before_evict_seconds Seconds [model_name,engine] 0.001,0.002,0.005,0.01,0.02,0.05,0.1,0.2,0.5,1,2,5,10,20,30,60,120,300,600,1200,1800',
      'histogram ts_kv_block_reuse_gap_seconds Seconds [model_name,engine] 0.001,0.002,0.005,0.01,0.02,0.05,0.1,0.2,0.5,1,2,5,10,20,30,60,120,300,600,1200,1800',
    ]);
    expect(llm.every((m) => m.hostLabel === null && m.section === 'ts_metrics')).to.equal(true);
  });

  it('should run the tslog and prometheus sinks by default', () => {
    expect(config.modes).to.deep.equal(['tslog', 'prometheus']);
  });

  it('should have unique names and a modeline pointing at the schema', () => {
    expect(byName.size).to.equal(config.metrics.length);
    const first = fs.readFileSync(defaultMetricsConfigPath(), 'utf8').split('\n')[0];
    expect(first).to.equal('# yaml-language-server: $schema=./schema/metrics.schema.json');
  });
});
