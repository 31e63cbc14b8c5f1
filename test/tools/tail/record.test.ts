import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { FIXED_NOW_MS, captureLog, makeConfig, makeSpec } from '../../frontend/metrics/make-config.js';
import { selector } from '../../../tools/tail/filter.js';
import { jsonLine } from '../../../tools/tail/json.js';
import { toRecord } from '../../../tools/tail/record.js';
import { TailTable } from '../../../tools/tail/table.js';

describe('tail records (read back what the tslog sink wrote)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tail-rec-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function write(): Promise<string[]> {
    const fm = new FrontendMetrics(
      makeConfig([
        makeSpec('HandlerTime', 'histogram', ['ModelName', 'Level'], { section: 'model_metrics', unit: 'ms' }),
      ]),
      {
        logDir: dir,
        hostname: 'host-1',
        nowMs: () => FIXED_NOW_MS,
        log: captureLog().log,
      },
    );
    const h = fm.get('HandlerTime')!;
    h.addOrUpdate(1, ['a|b,c:d%e\nf', 'x:y'], 'req|1');
    h.addOrUpdate(2.5, ['mlp', 'Model'], 'r1,r2');
    h.addOrUpdate(4, ['mlp', 'Model']);
    await fm.close();
    return fs.readFileSync(path.join(dir, 'model_metrics.log'), 'utf8').split('\n').slice(0, -1);
  }

  it('should decode every field the sink encoded, as JSON lines', async () => {
    const records = (await write()).map((l) => toRecord('model_metrics.log', l)!);
    expect(records.map(jsonLine).join('')).to.equal(
      [
        '{"file":"model_metrics.log","time":"2023-07-17T17:00:25,016","name":"HandlerTime","unit":"ms","value":1,"dimensions":{"ModelName":"a|b,c:d%e\\nf","Level":"x:y"},"hostname":"host-1","requestId":"req|1","timestamp":1689613225}',
        '{"file":"model_metrics.log","time":"2023-07-17T17:00:25,016","name":"HandlerTime","unit":"ms","value":2.5,"dimensions":{"ModelName":"mlp","Level":"Model"},"hostname":"host-1","requestId":"r1,r2","timestamp":1689613225}',
        '{"file":"model_metrics.log","time":"2023-07-17T17:00:25,016","name":"HandlerTime","unit":"ms","value":4,"dimensions":{"ModelName":"mlp","Level":"Model"},"hostname":"host-1","requestId":null,"timestamp":1689613225}',
        '',
      ].join('\n'),
    );
    expect(records.map((r) => r.timeMs)).to.deep.equal([FIXED_NOW_MS, FIXED_NOW_MS, FIXED_NOW_MS]);
    expect(
      records.filter(
        selector({ metrics: [], model: null, dims: [['ModelName', 'a|b,c:d%e\nf']], request: 'req|1', sinceMs: null }),
      ).length,
    ).to.equal(1);
  });

  it('should render one table row per series with exact aggregates', async () => {
    const table = new TailTable(60_000);
    for (const l of await write()) table.add(toRecord('model_metrics.log', l)!);
    expect(table.render(FIXED_NOW_MS)).to.equal(
      [
        'METRIC          SERIES                              COUNT     RATE/S  LAST  MEAN  P50  P99',
        'HandlerTime.ms  ModelName="a|b,c:d%e\\nf",Level=x:y      1  0.0166667     1     1    1    1',
        'HandlerTime.ms  ModelName=mlp,Level=Model               2  0.0333333     4  3.25  2.5    4',
        '',
        'window 60 s ending 2023-07-17T17:00:25.016Z; COUNT is every line since the start',
        '',
      ].join('\n'),
    );
  });
});
