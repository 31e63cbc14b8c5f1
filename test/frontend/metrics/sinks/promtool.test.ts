import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoadResult, MetricsConfig } from '../../../../schema/types.js';
import { loadMetricsConfig } from '../../../../schema/config/load.js';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';

const REPO = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..');

function hasPromtool(): boolean {
  return spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
}

/** The repo's metrics.yaml through the real loader, prometheus only. */
function fullConfig(): { config: MetricsConfig; source: string } {
  const res: LoadResult = loadMetricsConfig(path.join(REPO, 'metrics.yaml'));
  if (!res.ok) throw new Error(`metrics.yaml does not load: ${JSON.stringify(res.problems)}`);
  return { config: { ...res.config, modes: ['prometheus'] }, source: 'metrics.yaml' };
}

describe('PrometheusSink with promtool', () => {
  it('should render every metric of the full config without a promtool parse error', async function () {
    if (!hasPromtool()) {
      console.warn(
        'SKIPPED: promtool not found; install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    const { config, source } = fullConfig();
    const fm = new FrontendMetrics(config, {
      logDir: os.tmpdir(),
      hostname: 'host "1"\\',
      log: () => {},
      processMetrics: true,
    });
    const nasty = [
      'plain',
      'with "quotes"',
      'back\\slash',
      'new\nline',
      'a|b,c:d=e{}',
      'nul\u0000tab\tesc\u001b[31mdel\u007f',
    ];
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
    const families = new Set(
      text
        .split('\n')
        .filter((l) => l.startsWith('# TYPE '))
        .map((l) => l.split(' ')[2]),
    );
    expect(config.metrics.map((m) => m.name).filter((n) => !families.has(n))).to.deep.equal([]); // every declared metric rendered
  });
});
