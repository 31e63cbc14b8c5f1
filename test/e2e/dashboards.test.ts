/**
 * Every query of every generated dashboard, proven on a real Prometheus: the real server serves
 * mlp, custom and tiny-lm; Prometheus scrapes its metrics port every second and evaluates the
 * generated rules; after known traffic, each dashboard variable's `label_values` and each
 * panel's PromQL (variables substituted with the real label values, `$__rate_interval` with
 * 1m) run through /api/v1/query. Each parses and returns data, except the families listed in
 * MAY_BE_EMPTY (no traffic reaches them by design); the "since start" stats equal the traffic.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { dashboardQueries } from '../../tools/dashboards/grafana.js';
import { MAY_BE_EMPTY, repoDashboards, runDashboard, substitute, variableValues } from './dashboard-queries.js';
import { generateStore, mlpInput, post, removeStores, ROOT, skipWithout, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { startPrometheus } from './prometheus.js';
import type { Prometheus, PromSample } from './prometheus.js';
import { until } from '../support/until.js';
import sharp from 'sharp';
import { textImage } from '../../tools/models/glyph-image.js';
import { writeOcrCls } from '../../tools/models/ocr-cls.js';

const N_MLP = 7;
const N_CUSTOM = 3;
const N_EMBED = 2;
const PROMPTS = ['hello world', 'the quick brown fox', 'tsserve'];

describe('tsserve metrics dashboard (every query on a real Prometheus)', function () {
  let dir = '';
  let server: Tsserve | undefined;
  let prom: Prometheus | undefined;
  let promptTokens = 0;
  let completionTokens = 0;
  const dashboards = repoDashboards();

  before(async function () {
    this.timeout(180_000);
    skipWithout(this, 'prometheus', 'prometheus');
    dir = tempDir('dashboards');
    // The demo store, plus PaddleOCR's classifier behind image_classifier (not a demo model).
    const store = generateStore(['mlp', 'custom', 'tiny-lm', 'tiny-vocoder', 'tiny-omni', 'tiny-embed']);
    if (!fs.existsSync(path.join(store, 'ocr-cls'))) writeOcrCls(path.join(store, 'ocr-cls'), ROOT);
    server = await startTsserve({
      store,
      args: ['--metrics-mode', 'prometheus', '--metric-time-interval', '1'],
    });
    prom = await startPrometheus(
      path.join(dir, 'prom'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${path.join(ROOT, 'tools', 'prometheus', 'tsserve.rules.yml')}`,
        'scrape_configs:',
        '  - job_name: tsserve',
        '    static_configs:',
        `      - targets: ['${server.metrics.replace('http://', '')}']`,
        '',
      ].join('\n'),
    );
    for (let i = 0; i < N_MLP; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    for (let i = 0; i < N_CUSTOM; i++)
      expect((await post(`${server.inference}/predictions/custom`, mlpInput(i))).status).to.equal(200);
    expect((await post(`${server.inference}/predictions/no-such-model`, mlpInput(0))).status).to.equal(404);
    // Two spoken answers through the tiny-omni pipeline, a whole WAV and a stream, so the
    // pipelines dashboard has data too (the stream feeds the player-underrun families).
    for (const stream of [false, true]) {
      const r = await fetch(`${server.inference}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tiny-omni',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 8,
          temperature: 0,
          stream,
          modalities: ['text', 'audio'],
          audio: { voice: 'alloy', format: stream ? 'pcm16' : 'wav' },
        }),
      });
      expect([r.status, r.status === 200 ? '' : await r.text()]).to.deep.equal([200, '']);
      await r.text();
    }
    // Embeddings and images (one refused: the image families' refusals have a series too).
    for (let i = 0; i < N_EMBED; i++)
      expect(
        (await post(`${server.inference}/v1/embeddings`, { model: 'tiny-embed', input: 'hello' })).status,
      ).to.equal(200);
    const page = textImage('Hello World', 4);
    const png = await sharp(page.data, { raw: { width: page.width, height: page.height, channels: 3 } })
      .png()
      .toBuffer();
    for (const body of [png, Buffer.from('not an image')]) {
      const r = await fetch(`${server.inference}/predictions/ocr-cls`, { method: 'PUT', body });
      expect(r.status).to.equal(body === png ? 200 : 400);
      await r.text();
    }
    for (const prompt of PROMPTS) {
      const r = await post(`${server.inference}/v1/completions`, { model: 'tiny-lm', prompt, max_tokens: 5 });
      expect(r.status).to.equal(200);
      const usage = (r.json as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
      promptTokens += usage.prompt_tokens;
      completionTokens += usage.completion_tokens;
    }
    // Scraped after the traffic, then two more scrapes, so every rate has two samples of the final values.
    const seen = await until(
      async () => {
        const [req, done, spoken, embedded] = [
          await prom!.query('sum(ts_inference_requests_total)'),
          await prom!.query('sum(ts_request_success_total{model_name="tiny-lm"})'),
          await prom!.query('sum(ts_omni_requests_success_total)'),
          await prom!.query('sum(ts_embedding_requests_total)'),
        ];
        // Every door counts: predictions (the image answered), embeddings, the 2 spoken answers, the completions.
        return req[0]?.value === String(N_MLP + N_CUSTOM + 1 + N_EMBED + 2 + PROMPTS.length) &&
          embedded[0]?.value === String(N_EMBED) &&
          done[0]?.value === String(PROMPTS.length) &&
          spoken[0]?.value === '2'
          ? await prom!.query('count_over_time(up[10m])')
          : null;
      },
      { message: 'Prometheus to scrape the traffic', timeoutMs: 60_000 },
    );
    const scrapes = Number(seen[0]?.value);
    await until(async () => Number((await prom!.query('count_over_time(up[10m])'))[0]?.value) >= scrapes + 2, {
      message: 'two more scrapes',
      timeoutMs: 30_000,
    });
  });

  after(() => {
    prom?.stop();
    server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should start the whole store (--models all) without an error line: the vocoder stage is noted at info, not skipped as broken', () => {
    const lines = server!
      .output()
      .split('\n')
      .filter((l) => l.includes('tiny-vocoder'));
    expect(
      lines.filter((l) => l.includes('not served alone')).map((l) => (JSON.parse(l) as { level: string }).level),
    ).to.deep.equal(['info']);
    expect(server!.output()).to.not.contain('"level":"error"');
  });

  it('should have Prometheus evaluate every generated rule without an error', async () => {
    const res = await fetch(`${prom!.url}/api/v1/rules`);
    const body = (await res.json()) as {
      data: { groups: Array<{ name: string; rules: Array<{ name: string; health: string; lastError?: string }> }> };
    };
    const unhealthy = body.data.groups.flatMap((g) =>
      g.rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`),
    );
    expect(unhealthy).to.deep.equal([]);
    expect(body.data.groups.map((g) => g.name).sort()).to.deep.equal(['tsserve.alerts', 'tsserve.records']);
    expect(
      (await prom!.query('model_name:ts_inference_requests:rate5m')).map((s) => s.metric.model_name).sort(),
    ).to.deep.equal(['custom', 'mlp', 'ocr-cls', 'tiny-embed', 'tiny-lm', 'tiny-omni']);
  });

  for (const d of dashboards) {
    it(`should run every query of ${d.file} on Prometheus: each parses and returns data (or is listed as empty by design)`, async function () {
      this.timeout(120_000);
      const { answered, empty } = await runDashboard(prom!, d, MAY_BE_EMPTY);
      expect(empty, 'queries that returned no data').to.deep.equal([]);
      expect(answered > 0 || d.file === 'tsserve-pipelines.json').to.equal(true);
    });
  }

  async function panelValues(file: string, title: string): Promise<PromSample[]> {
    const d = dashboards.find((x) => x.file === file)!;
    const q = dashboardQueries(d.json).find((x) => x.panel === title);
    expect(q, `${file}: panel ${title}`).to.not.equal(undefined);
    return prom!.query(substitute(q!.expr, await variableValues(prom!, d)));
  }

  it('should show exactly the requests sent in the serving dashboard\'s "Inference requests (since start)"', async () => {
    const got = await panelValues('tsserve-serving.json', 'Inference requests (since start)');
    expect(Object.fromEntries(got.map((s) => [s.metric.model_name, s.value]))).to.deep.equal({
      mlp: String(N_MLP),
      custom: String(N_CUSTOM),
      'ocr-cls': '1',
      'tiny-embed': String(N_EMBED),
      // Completions and spoken answers are inference requests too.
      'tiny-lm': String(PROMPTS.length),
      'tiny-omni': '2',
    });
  });

  it("should show exactly the completions and their tokens in the generation dashboard's totals", async () => {
    const values = async (title: string): Promise<Record<string, string>> =>
      Object.fromEntries(
        (await panelValues('tsserve-generation.json', title)).map((s) => [s.metric.model_name, s.value]),
      );
    // tiny-omni's thinker carries stage/replica instead of engine: it is on the pipelines dashboard, not here.
    expect(await values('Finished requests (since start)')).to.deep.equal({ 'tiny-lm': String(PROMPTS.length) });
    expect((await values('Prompt tokens (since start)'))['tiny-lm']).to.equal(String(promptTokens));
    expect((await values('Generated tokens (since start)'))['tiny-lm']).to.equal(String(completionTokens));
    expect(completionTokens).to.equal(PROMPTS.length * 5);
  });
});
