/**
 * The generated Prometheus rules: the committed tools/prometheus/tsserve.rules.yml equals a
 * regenerate, reads back as the rule groups it was written from, passes `promtool check rules`
 * and the hand-written `promtool test rules` unit tests, and follows the yaml's names.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { defaultMetricsConfigPath, loadMetricsConfig, parseMetricsConfig } from '../../schema/config/load.js';
import { loadYaml } from '../../schema/config/yaml-source.js';
import type { MetricsConfig } from '../../schema/types.js';
import { renderRules } from '../../tools/rules/render.js';
import { ruleGroups } from '../../tools/rules/rules.js';
import { isPlain, toYaml } from '../../tools/rules/yaml.js';
import { skipWithout } from '../e2e/harness.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'tsserve.js');
const RULES = path.join(ROOT, 'tools', 'prometheus', 'tsserve.rules.yml');

function repoConfig(): MetricsConfig {
  const r = loadMetricsConfig(defaultMetricsConfigPath());
  if (!r.ok) throw new Error('the repo metrics.yaml does not load');
  return r.config;
}

describe('tsserve metrics rules', () => {
  it('should regenerate exactly the committed tools/prometheus/tsserve.rules.yml, and print it from the CLI', () => {
    const text = renderRules(repoConfig());
    expect(fs.readFileSync(RULES, 'utf8')).to.equal(text);
    const r = spawnSync(process.execPath, [BIN, 'metrics', 'rules'], { cwd: ROOT, encoding: 'utf8' });
    expect([r.status, r.stderr, r.stdout]).to.deep.equal([0, '', text]);
  });

  it('should write --out into a directory it creates, as dashboard --out does (it failed with ENOENT), and name a path it cannot write', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rules-'));
    try {
      const out = path.join(dir, 'rules.d', 'tsserve.rules.yml');
      const r = spawnSync(process.execPath, [BIN, 'metrics', 'rules', '--out', out], { cwd: ROOT, encoding: 'utf8' });
      expect([r.status, r.stderr, r.stdout, fs.readFileSync(out, 'utf8')]).to.deep.equal([
        0,
        '',
        `wrote ${out}\n`,
        renderRules(repoConfig()),
      ]);
      const bad = spawnSync(process.execPath, [BIN, 'metrics', 'rules', '--out', path.join(dir, 'rules.d')], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect([bad.status, bad.stderr, bad.stdout]).to.deep.equal([
        1,
        `tsserve metrics rules: EISDIR: illegal operation on a directory, open '${path.join(dir, 'rules.d')}'\n`,
        '',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should read back (YAML) as exactly the rule groups it was written from', () => {
    const groups = ruleGroups(repoConfig());
    expect(loadYaml(fs.readFileSync(RULES, 'utf8'))).to.deep.equal(JSON.parse(JSON.stringify({ groups })));
  });

  it('should pass promtool check rules', function () {
    skipWithout(this, 'promtool', 'prometheus');
    const r = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    const count = ruleGroups(repoConfig()).reduce((n, g) => n + g.rules.length, 0);
    expect([r.status, r.stderr, r.stdout]).to.deep.equal([
      0,
      '',
      `Checking ${RULES}\n  SUCCESS: ${count} rules found\n\n`,
    ]);
  });

  it('should pass the promtool unit tests of tools/prometheus/tests (exact recorded values and alerts)', function () {
    skipWithout(this, 'promtool', 'prometheus');
    const r = spawnSync('promtool', ['test', 'rules', 'tsserve.rules.test.yml'], {
      cwd: path.join(ROOT, 'tools', 'prometheus', 'tests'),
      encoding: 'utf8',
    });
    expect([r.status, r.stdout + r.stderr]).to.deep.equal([0, 'Unit Testing:  tsserve.rules.test.yml\n  SUCCESS\n\n']);
  });

  it('should be loaded by the shipped tools/prometheus/prometheus.yml (promtool check config)', function () {
    skipWithout(this, 'promtool', 'prometheus');
    const r = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], {
      cwd: path.join(ROOT, 'tools', 'prometheus'),
      encoding: 'utf8',
    });
    expect([r.status, r.stdout.split('\n').slice(0, 2)]).to.deep.equal([
      0,
      ['Checking prometheus.yml', '  SUCCESS: 1 rule files found'],
    ]);
  });

  it('should alert on worker restarts from tsserve_worker_restarts_total, not from a count of WorkerLoadTime series (a scale-up fired it)', () => {
    const rule = ruleGroups(repoConfig())
      .flatMap((g) => g.rules)
      .find((x) => 'alert' in x && x.alert === 'TsserveWorkersRestarted');
    expect(rule && 'alert' in rule ? [rule.expr, rule.for, rule.annotations.summary] : null).to.deep.equal([
      'sum by (instance, model_name) (increase(tsserve_worker_restarts_total[15m])) > 0',
      '0m',
      '{{ $value | printf "%.0f" }} worker(s) of {{ $labels.model_name }} on {{ $labels.instance }} exited unexpectedly in the last 15 minutes',
    ]);
  });

  it("should alert on a restart from the instance's earliest process start time (with --api-server-count 2 each series has a pid and changes() never fired)", () => {
    const rules = ruleGroups(repoConfig()).flatMap((g) => g.rules);
    const record = rules.find((x) => 'record' in x && x.record === 'instance_job:process_start_time_seconds:min');
    const alert = rules.find((x) => 'alert' in x && x.alert === 'TsserveRestarted');
    expect([record?.expr, alert?.expr]).to.deep.equal([
      'min by (instance, job) (process_start_time_seconds)',
      'changes(instance_job:process_start_time_seconds:min[15m]) > 0',
    ]);
  });

  it("should follow the yaml's names: vLLM's names rename the rules, a family left out drops them", () => {
    let text = fs.readFileSync(defaultMetricsConfigPath(), 'utf8');
    text = text.replaceAll('name: ts_time_to_first_token_seconds', 'name: vllm:time_to_first_token_seconds');
    text = text.replace(/ {4}- name: ts_kv_cache_usage_ratio\n(?: {6}.*\n)+/, '');
    const r = parseMetricsConfig(text, 'metrics.yaml');
    if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
    const rules = ruleGroups(r.config).flatMap((g) => g.rules);
    const names = rules.map((x) => ('record' in x ? x.record : x.alert));
    expect(names).to.include('model_name:vllm:time_to_first_token_seconds:p99_5m');
    expect(names).to.not.include('TsserveKVCacheNearFull');
    const ttft = rules.find((x) => 'alert' in x && x.alert === 'TsserveTimeToFirstTokenHigh');
    expect(ttft?.expr).to.equal('model_name:vllm:time_to_first_token_seconds:p99_5m > 5');
    expect(
      rules.find((x) => 'record' in x && x.record === 'model_name:vllm:time_to_first_token_seconds:p99_5m')?.expr,
    ).to.equal('histogram_quantile(0.99, sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket[5m])))');
  });
  describe('--show-hidden-metrics-for-version', () => {
    /** The vLLM profile without vllm:kv_cache_usage_perc (and so without it as the replacement): its KV family is then vllm:gpu_cache_usage_perc, hidden in 0.1. */
    const yaml = fs
      .readFileSync(path.join(ROOT, 'metrics-vllm.yaml'), 'utf8')
      .replace(/ {4}- name: vllm:kv_cache_usage_perc\n(?: {6}.*\n)+/, '')
      .replace('replacement: "vllm:kv_cache_usage_perc", ', '');

    /** `tsserve metrics rules` as version `version` over that file: exit code, stderr and the rules' names. */
    function rules(version: string, ...flags: string[]): [number | null, string, string[]] {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rules-hidden-'));
      try {
        fs.writeFileSync(path.join(dir, 'metrics.yaml'), yaml);
        const r = spawnSync(
          process.execPath,
          [BIN, 'metrics', 'rules', '--metrics-config', path.join(dir, 'metrics.yaml'), ...flags],
          { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TS_SERVER_VERSION: version } },
        );
        const groups =
          r.status === 0
            ? (
                loadYaml(r.stdout) as {
                  groups: Array<{ rules: Array<{ record?: string; alert?: string; expr: string }> }>;
                }
              ).groups
            : [];
        return [
          r.status,
          r.stderr,
          groups.flatMap((g) => g.rules.map((x) => `${x.record ?? (x.alert as string)}: ${x.expr}`)),
        ];
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    it('should leave a family hidden at the version out of every rule without the flag, and alert on it with it, as the server exposes it', () => {
      const [code, err, hidden] = rules('0.1.0');
      const [codeShown, errShown, shown] = rules('0.1.0', '--show-hidden-metrics-for-version', '0.0');
      expect([code, err, codeShown, errShown]).to.deep.equal([0, '', 0, '']);
      expect(hidden.filter((x) => x.includes('gpu_cache_usage'))).to.deep.equal([]);
      expect(shown.filter((x) => !hidden.includes(x))).to.deep.equal([
        'TsserveKVCacheNearFull: max by (instance, model_name) (vllm:gpu_cache_usage_perc) > 0.95',
      ]);
      expect(hidden.filter((x) => !shown.includes(x))).to.deep.equal([]);
    });

    it("should refuse a version the server refuses, with the server's message and exit 2", () => {
      expect(rules('0.1.0', '--show-hidden-metrics-for-version', '0.1')).to.deep.equal([
        2,
        'tsserve metrics rules: --show-hidden-metrics-for-version: 0.1 is not accepted; only 0.0, the previous minor version of tsserve 0.1, is accepted\n',
        [],
      ]);
      expect(rules('0.1.0', '--show-hidden-metrics-for-version', 'latest')).to.deep.equal([
        2,
        'tsserve metrics rules: --show-hidden-metrics-for-version: "latest" is not a version X.Y; only 0.0, the previous minor version of tsserve 0.1, is accepted\n',
        [],
      ]);
    });
  });
});

describe('toYaml (rule files)', () => {
  it('should write a string plain only when YAML reads it back unchanged, else double-quoted', () => {
    expect(
      ['sum(x) > 0', 'a{b="c"}', '{{ $value }} left', 'a: b', 'x #y', 'true', '5', '- x', ''].map(isPlain),
    ).to.deep.equal([true, true, false, false, false, false, false, false, false]);
    const doc = {
      groups: [
        {
          name: 'g',
          rules: [
            {
              alert: 'A',
              expr: 'up == 0',
              annotations: { summary: '{{ $labels.instance }} is down', description: 'Runbook: restart it.' },
            },
          ],
        },
      ],
    };
    const text = toYaml(doc, ['a comment']);
    expect(text).to.equal(
      [
        '# a comment',
        'groups:',
        '  - name: g',
        '    rules:',
        '      - alert: A',
        '        expr: up == 0',
        '        annotations:',
        '          summary: "{{ $labels.instance }} is down"',
        '          description: "Runbook: restart it."',
        '',
      ].join('\n'),
    );
    expect(loadYaml(text)).to.deep.equal(doc);
  });
});
