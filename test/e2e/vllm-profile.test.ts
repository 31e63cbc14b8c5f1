/**
 * The vLLM profile end to end: a REAL `tsserve start --metrics-profile vllm` serving two
 * generation models (tiny-lm with KV residency sampled at 1.0, tiny-lm-b with one running
 * sequence at most and no prefix caching), completions through the openai client, then /metrics
 * read the way the inference gateway's endpoint picker reads a pod: text format, the family's
 * `# TYPE … gauge` line, the first matching series, cache_config_info's integer labels (one
 * series per model), and every vllm: family's # HELP exactly vLLM's.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadMetricsConfig, profileConfigPath } from '../../schema/config/load.js';
import { VLLM_NAMES } from '../../tools/profiles/vllm-profile.js';
import { openaiClient, tinyLmVariants } from './generation-helpers.js';
import { removeStores, sample, scrape, skipWithout, startTsserve, tempDir } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';

/** A family as the gateway's text parser sees it: its TYPE and its series in exposition order. */
interface Family {
  type: string | null;
  series: { labels: Record<string, string>; value: number }[];
}

function parseFamilies(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  const fam = (n: string): Family => {
    let f = out.get(n);
    if (f === undefined) out.set(n, (f = { type: null, series: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t !== null) {
      fam(t[1]!).type = t[2]!;
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    const base = m[1]!.replace(/_(bucket|sum|count)$/, '');
    fam(out.has(m[1]!) ? m[1]! : base).series.push({ labels, value: Number(m[3]) });
  }
  return out;
}

describe('vLLM profile (real tsserve start --metrics-profile vllm)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;
  let text: string;

  before(async () => {
    dir = tempDir('vllm-profile');
    const store = tinyLmVariants(path.join(dir, 'store'), {
      'tiny-lm': { numBlocks: 24, maxModelLen: 384, kvCacheMetricsSample: 1 },
      'tiny-lm-b': { numBlocks: 32, maxModelLen: 512, maxNumSeqs: 1, enablePrefixCaching: false },
    });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: ['--metrics-profile', 'vllm', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
      logDir: path.join(dir, 'logs'),
    });
    const client = openaiClient(server);
    await client.completions.create({ model: 'tiny-lm', prompt: 'hello vllm names', max_tokens: 4, temperature: 0 });
    // A prompt of exactly two 16-token blocks, twice: the second finds both cached and computes the last again.
    const twoBlocks = Array.from({ length: 32 }, (_v, i) => 100 + i);
    for (let i = 0; i < 2; i++)
      await client.completions.create({ model: 'tiny-lm', prompt: twoBlocks, max_tokens: 1, temperature: 0 });
    text = await scrape(server);
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should give the gateway each gauge with its TYPE line and cache_config_info's integers", () => {
    const fams = parseFamilies(text);
    for (const g of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:cache_config_info',
    ]) {
      const f = fams.get(g);
      expect(f?.type, g).to.equal('gauge');
      expect(f!.series[0]!.labels.engine, g).to.equal('0');
    }
    // The gateway takes the series of its model (two models: their order is the order their engines came up).
    const of = (f: string): Family['series'][number] =>
      fams.get(f)!.series.find((s) => s.labels.model_name === 'tiny-lm')!;
    expect(of('vllm:num_requests_running').labels.engine).to.equal('0');
    expect(of('vllm:num_requests_waiting').value).to.equal(0);
    const info = of('vllm:cache_config_info');
    expect(info.value).to.equal(1);
    expect([
      Number.parseInt(info.labels.block_size!, 10),
      Number.parseInt(info.labels.num_gpu_blocks!, 10),
    ]).to.deep.equal([16, 24]);
    expect(fams.get('vllm:prompt_tokens_total')?.type).to.equal('counter');
    expect(fams.get('vllm:time_to_first_token_seconds')?.type).to.equal('histogram');
    expect(text).to.contain('vllm:request_success_total{model_name="tiny-lm",engine="0",finished_reason="length"} 3'); // the two-block prompts too
    expect(text).to.contain('vllm:request_params_max_tokens_sum{model_name="tiny-lm",engine="0"} 6');
  });

  it("should expose exactly the profile's declared vllm: families (the deprecated gpu_cache_usage_perc and time_per_output_token_seconds hidden)", () => {
    const r = loadMetricsConfig(profileConfigPath('vllm')!);
    if (!r.ok) throw new Error('metrics-vllm.yaml does not load');
    const hidden = ['vllm:gpu_cache_usage_perc', 'vllm:time_per_output_token_seconds'];
    const declared = r.config.metrics
      .filter((m) => m.name.startsWith('vllm:') && !hidden.includes(m.name))
      .map((m) => m.name)
      .sort();
    const exposed = [...text.matchAll(/^# TYPE (vllm:\S+) /gm)].map((m) => m[1]!).sort();
    expect(exposed).to.deep.equal(declared);
    for (const h of hidden) expect(text).to.not.contain(h);
  });

  it("should give one cache_config_info series per generation model, with vLLM's CacheConfig labels as vLLM prints them", () => {
    const info = parseFamilies(text).get('vllm:cache_config_info')!;
    const common = { engine: '0', block_size: '16', num_cpu_blocks: 'None', cache_dtype: 'float32' };
    const rest = { sliding_window: 'None', prefix_caching_hash_algo: 'sha256' };
    expect(info.series.map((s) => ({ ...s.labels, value: s.value }))).to.have.deep.members([
      { model_name: 'tiny-lm', ...common, num_gpu_blocks: '24', enable_prefix_caching: 'True', ...rest, value: 1 },
      { model_name: 'tiny-lm-b', ...common, num_gpu_blocks: '32', enable_prefix_caching: 'False', ...rest, value: 1 },
    ]);
    expect(info.series).to.have.length(2);
  });

  it("should print every vllm: family's # HELP exactly as vLLM does (no unit suffix)", () => {
    const helps = new Map([...text.matchAll(/^# HELP (vllm:\S+) (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    const expected = new Map(Object.values(VLLM_NAMES).map(([name, help]) => [name, help]));
    for (const [name, help] of helps) expect(help, name).to.equal(expected.get(name));
    expect(helps.get('vllm:num_requests_running')).to.equal('Number of requests in model execution batches.');
    expect(text).to.not.match(/^# HELP vllm:.*\(unit: /m);
  });

  it('should hold the MFU counters at 0 without --enable-mfu-metrics, give corrupted_requests no series without VLLM_COMPUTE_NANS_IN_LOGITS=1, and pre-create repetition at 0', () => {
    const L = '{model_name="tiny-lm",engine="0"}';
    expect(
      ['flops', 'read_bytes', 'write_bytes'].map((k) => sample(text, `vllm:estimated_${k}_per_gpu_total${L}`)),
    ).to.deep.equal([0, 0, 0]);
    expect(text).to.not.match(/^vllm:corrupted_requests_total\{/m);
    expect(
      sample(text, 'vllm:request_success_total{model_name="tiny-lm",engine="0",finished_reason="repetition"}'),
    ).to.equal(0);
  });

  it('should count the 16 cached tokens a fully cached two-block prompt computed again in prompt_tokens_recomputed', () => {
    const at = (m: string): number | null =>
      sample(text, `vllm:prompt_tokens_recomputed_total{model_name="${m}",engine="0"}`);
    expect([at('tiny-lm'), at('tiny-lm-b')]).to.deep.equal([16, 0]);
    expect(sample(text, 'vllm:prompt_tokens_cached_total{model_name="tiny-lm",engine="0"}')).to.equal(16);
  });

  it('should show requests queued past a one-sequence engine as waiting for capacity, none deferred', async () => {
    const client = openaiClient(server);
    const streams = await Promise.all(
      [0, 1, 2].map((i) =>
        client.completions.create({
          model: 'tiny-lm-b',
          prompt: `queued ${i}`,
          max_tokens: 400,
          temperature: 0,
          stream: true,
          ...({ ignore_eos: true } as object),
        }),
      ),
    );
    const series = (reason: string): string =>
      `vllm:num_requests_waiting_by_reason{model_name="tiny-lm-b",engine="0",reason="${reason}"}`;
    const seen = await until(
      async () => {
        const t = await scrape(server);
        const w = sample(t, 'vllm:num_requests_waiting{model_name="tiny-lm-b",engine="0"}');
        return w === 2 ? [sample(t, series('capacity')), sample(t, series('deferred'))] : null;
      },
      { message: 'two of three requests waiting on tiny-lm-b (maxNumSeqs 1)' },
    );
    for (const s of streams) s.controller.abort();
    expect(seen).to.deep.equal([2, 0]);
  });

  it("should answer vLLM's dev-mode endpoints with 404 without VLLM_SERVER_DEV_MODE=1, and bind the sleep state awake", async () => {
    const r = await fetch(`${server.inference}/sleep`, { method: 'POST' });
    expect(r.status).to.equal(404);
    expect(((await r.json()) as { error: { message: string } }).error.message).to.equal(
      '/sleep is a vLLM dev-mode endpoint: start the server with VLLM_SERVER_DEV_MODE=1',
    );
    const states = ['awake', 'weights_offloaded', 'discard_all'].map((s) =>
      sample(text, `vllm:engine_sleep_state{model_name="tiny-lm",engine="0",sleep_state="${s}"}`),
    );
    expect(states).to.deep.equal([1, 0, 0]);
  });

  it("should pass promtool check metrics but for the naming lint vLLM's own names draw (colons, a histogram named _total)", function () {
    skipWithout(this, 'promtool', 'prometheus');
    const res = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const findings = (res.stdout + res.stderr).split('\n').filter((l) => l.startsWith('vllm:'));
    // promtool lints the families that have samples (the residency histograms have none: no block was evicted).
    const families = [...text.matchAll(/^# TYPE (vllm:\S+) /gm)]
      .map((m) => m[1]!)
      .filter((f) => new RegExp(`^${f}(_bucket|_sum|_count)?[{ ]`, 'm').test(text));
    const expected = [
      ...families.map((f) => `${f} metric names should not contain ':'`),
      'vllm:iteration_tokens_total non-counter metrics should not have "_total" suffix',
    ].sort();
    expect(findings.sort()).to.deep.equal(expected);
    expect(res.stdout + res.stderr).to.not.match(/error|parse/i);
  });
});
