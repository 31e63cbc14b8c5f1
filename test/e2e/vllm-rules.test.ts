/**
 * tools/prometheus/vllm-names.rules.yml: `promtool check rules` clean, and `promtool test rules`
 * with input series taken from a real scrape of `tsserve start` (default metrics.yaml, tiny-lm,
 * one completion): every ts_ LLM sample comes out under vLLM's name with the same labels and value.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openaiClient, tinyLmVariants } from './generation-helpers.js';
import { ROOT, removeStores, scrape, skipWithout, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

const RULES = path.join(ROOT, 'tools', 'prometheus', 'vllm-names.rules.yml');

/** The rules file's record ← expr pairs whose expr is a plain metric name. */
function plainRules(): Map<string, string> {
  const text = fs.readFileSync(RULES, 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/- record: (\S+)\n\s+expr: ([a-zA-Z_:][a-zA-Z0-9_:]*)\n/g)) out.set(m[2]!, m[1]!);
  return out;
}

describe('vLLM recording rules (promtool, real scrape)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Tsserve;
  let text: string;

  before(async function () {
    skipWithout(this, 'promtool', 'prometheus');
    dir = tempDir('vllm-rules');
    const store = tinyLmVariants(path.join(dir, 'store'), { 'tiny-lm': {} });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'],
      logDir: path.join(dir, 'logs'),
    });
    await openaiClient(server).completions.create({
      model: 'tiny-lm',
      prompt: 'recording rules',
      max_tokens: 3,
      temperature: 0,
    });
    text = await scrape(server);
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should pass promtool check rules', () => {
    const res = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(res.status, res.stdout + res.stderr).to.equal(0);
  });

  it("should derive every scraped ts_ LLM sample under vLLM's name (promtool test rules)", () => {
    const rules = plainRules();
    const inputs: string[] = [];
    const expects: string[] = [];
    for (const line of text.split('\n')) {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
      if (m === null) continue;
      const rec = rules.get(m[1]!);
      if (rec === undefined) continue;
      const labels = m[2] ?? '';
      inputs.push(`      - series: '${m[1]}${labels}'\n        values: '${m[3]}x2'`);
      expects.push(`          - labels: '${rec}${labels}'\n            value: ${m[3]}`);
    }
    expect(inputs.length).to.be.greaterThan(100);
    expect(text).to.contain('ts_request_success_total{model_name="tiny-lm",engine="0",finished_reason="length"} 1');
    const groups = [...rules.values()].map((rec) => {
      const mine = expects.filter((e) => e.includes(`'${rec}{`) || e.includes(`'${rec}'`));
      // A family with no sample yet (the residency histograms) must record nothing.
      return `      - expr: '${rec}'\n        eval_time: 1m\n        exp_samples:${mine.length === 0 ? ' []' : `\n${mine.join('\n')}`}`;
    });
    const test = `rule_files: ['${RULES}']\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n${inputs.join('\n')}\n    promql_expr_test:\n${groups.join('\n')}\n`;
    const file = path.join(dir, 'rules.test.yml');
    fs.writeFileSync(file, test);
    const res = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
    expect(res.stdout + res.stderr).to.contain('SUCCESS');
    expect(res.status).to.equal(0);
  });
});
