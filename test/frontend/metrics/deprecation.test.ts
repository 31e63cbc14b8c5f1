import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { parseMetricsConfig } from '../../../schema/config/load.js';
import type { MetricsConfig } from '../../../schema/types.js';

const YAML = `
mode: [prometheus, tslog]
ts_metrics:
  counter:
    - name: OldRequests
      unit: Count
      help: Requests answered
      deprecated: {since: "0.1", replacement: Requests}
    - name: Requests
      unit: Count
      help: Requests answered
    - name: Internal
      unit: Count
      hidden: true
`;

function load(): MetricsConfig {
  const r = parseMetricsConfig(YAML, 'm.yaml');
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'));
  return r.config;
}

/** Builds the cache at `version`, records 1 into each metric, returns /metrics, ts_metrics.log and the log. */
async function run(
  version: string,
  showHidden: string | null,
): Promise<{ text: string; tslog: string; logs: string[]; hidden: boolean }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-deprecation-'));
  const logs: string[] = [];
  const fm = new FrontendMetrics(load(), {
    logDir: dir,
    hostname: 'h',
    nowMs: () => 1_700_000_000_000,
    serverVersion: version,
    showHiddenMetricsForVersion: showHidden,
    log: (level, m) => logs.push(`${level}: ${m}`),
  });
  try {
    for (const name of ['OldRequests', 'Requests', 'Internal']) fm.get(name)!.bind().record(1);
    const text = await fm.prometheusText(['OldRequests', 'Requests', 'Internal', 'tsserve_datapoints_dropped_total']);
    await fm.close(); // the tslog file is written by then
    const tslog = fs
      .readFileSync(path.join(dir, 'ts_metrics.log'), 'utf8')
      .split('\n')
      .filter((l) => / - (OldRequests|Requests|Internal)\./.test(l))
      .map((l) => l.replace(/^\S+ - /, ''))
      .join('\n');
    return {
      text,
      tslog,
      logs: logs.filter((l) => !l.includes('dropped')),
      hidden: fm.config.metrics[0]?.hidden === true,
    };
  } finally {
    await fm.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('FrontendMetrics deprecated and hidden metrics', () => {
  it('should show a deprecated metric with the notice first in HELP and list it once at start-up', async () => {
    const r = await run('0.2.0', null);
    expect(r.text).to.equal(
      [
        '# HELP OldRequests (Deprecated since 0.1, use Requests instead) Requests answered (unit: Count)',
        '# TYPE OldRequests counter',
        'OldRequests 1',
        '',
        '# HELP Requests Requests answered (unit: Count)',
        '# TYPE Requests counter',
        'Requests 1',
        '',
        '# HELP tsserve_datapoints_dropped_total Datapoints dropped instead of recorded, by reason (unit: Count)',
        '# TYPE tsserve_datapoints_dropped_total counter',
        '',
      ].join('\n'),
    );
    expect(r.tslog).to.equal(
      'OldRequests.Count:1.0|#|#hostname:h,timestamp:1700000000\nRequests.Count:1.0|#|#hostname:h,timestamp:1700000000',
    );
    expect(r.logs).to.deep.equal([
      'warn: metrics: deprecated metrics in use: OldRequests (Deprecated since 0.1, use Requests instead); ' +
        'hidden metrics (not exposed, logged or sent): Internal',
    ]);
  });

  it('should hide it two minor versions later: not exposed, not logged, records are no-ops and not drops', async () => {
    const r = await run('0.3.0', null);
    expect(r.hidden).to.equal(true);
    expect(r.text).to.equal(
      '# HELP Requests Requests answered (unit: Count)\n# TYPE Requests counter\nRequests 1\n\n' +
        '# HELP tsserve_datapoints_dropped_total Datapoints dropped instead of recorded, by reason (unit: Count)\n' +
        '# TYPE tsserve_datapoints_dropped_total counter\n',
    );
    expect(r.tslog).to.equal('Requests.Count:1.0|#|#hostname:h,timestamp:1700000000');
    expect(r.logs).to.deep.equal([
      'warn: metrics: hidden metrics (not exposed, logged or sent): OldRequests, Internal',
    ]);
  });

  it('should show it again with --show-hidden-metrics-for-version naming the previous minor version, and only that one', async () => {
    const shown = await run('0.3.0', '0.2');
    expect(shown.text.split('\n')[0]).to.equal(
      '# HELP OldRequests (Deprecated since 0.1, use Requests instead) Requests answered (unit: Count)',
    );
    expect(shown.tslog.split('\n')[0]).to.equal('OldRequests.Count:1.0|#|#hostname:h,timestamp:1700000000');
    const refused = await run('0.3.0', '0.1');
    expect(refused.hidden).to.equal(true);
    expect(refused.logs[0]).to.equal(
      'warn: metrics: --show-hidden-metrics-for-version: 0.1 is not accepted; only 0.2, the previous ' +
        'minor version of tsserve 0.3, is accepted; hidden metrics stay hidden',
    );
  });
});
