/**
 * deploy/haproxy/haproxy.cfg against the server it balances: its timeouts leave tsserve the
 * time its models may take; deploy/haproxy/prometheus.yml loads the generated rules and passes
 * `promtool check config` with them (the runs themselves are in test/e2e/instances.test.ts).
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { load } from 'js-yaml';
import { defaultMetricsConfigPath, loadMetricsConfig } from '../../schema/config/load.js';
import { generateStore } from '../../tools/models/store.js';
import { ruleGroups } from '../../tools/rules/rules.js';
import { renderRules } from '../../tools/rules/render.js';
import { skipWithout } from '../e2e/harness.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const CFG = path.join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg');
const PROM_DIR = path.join(ROOT, 'deploy', 'haproxy');

/** The value of `timeout <what>` in the cfg's defaults. */
function timeout(what: string): string | undefined {
  return new RegExp(`^\\s*timeout ${what} (\\S+)$`, 'm').exec(fs.readFileSync(CFG, 'utf8'))?.[1];
}

describe('deploy/haproxy/haproxy.cfg', () => {
  let store = '';
  before(async () => {
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-haproxy-'));
    await generateStore(store);
  });
  after(() => fs.rmSync(store, { recursive: true, force: true }));

  it('should wait on a server longer than the longest responseTimeout of the demo models (at 60 s it answered 504 itself for tiny-lm, which has 120 s)', () => {
    const timeouts = fs.readdirSync(store).filter((d) => !d.startsWith('.')).sort()
      .map((d) => [d, (load(fs.readFileSync(path.join(store, d, 'model-config.yaml'), 'utf8')) as { responseTimeout: number }).responseTimeout]);
    expect(timeouts).to.deep.equal([['custom', 30], ['mlp', 30], ['tiny-embed', 30], ['tiny-lm', 120], ['tiny-lm-hf', 120], ['tiny-omni', 120], ['tiny-vocoder', 60]]);
    expect([timeout('client'), timeout('server')]).to.deep.equal(['125s', '125s']);
    expect(parseInt(timeout('server') ?? '0', 10)).to.be.greaterThan(Math.max(...timeouts.map(([, t]) => t as number)));
  });
});

describe('deploy/haproxy/prometheus.yml', () => {
  const rules = (): string => {
    const r = loadMetricsConfig(defaultMetricsConfigPath());
    if (!r.ok) throw new Error('the repo metrics.yaml does not load');
    return renderRules(r.config);
  };

  it('should ship tsserve.rules.yml as `tsserve metrics rules` writes it for the repo metrics.yaml (npm run dashboards rewrites it)', () => {
    expect(fs.readFileSync(path.join(PROM_DIR, 'tsserve.rules.yml'), 'utf8'), 'stale: run npm run dashboards').to.equal(rules());
  });

  it('should load the generated rules: promtool check config passes with its rule file (it loaded none)', function () {
    skipWithout(this, 'promtool', 'prometheus');
    const r = loadMetricsConfig(defaultMetricsConfigPath());
    if (!r.ok) throw new Error('the repo metrics.yaml does not load');
    const count = ruleGroups(r.config).reduce((n, g) => n + g.rules.length, 0);
    const check = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], { cwd: PROM_DIR, encoding: 'utf8' });
    expect([check.status, check.stdout, check.stderr]).to.deep.equal([0, [
      'Checking prometheus.yml',
      '  SUCCESS: 1 rule files found',
      ' SUCCESS: prometheus.yml is valid prometheus config file syntax',
      '',
      'Checking tsserve.rules.yml',
      `  SUCCESS: ${count} rules found`,
      '',
      '',
    ].join('\n'), '']);
  });
});
