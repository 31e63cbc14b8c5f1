import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadMetricsConfig } from '../../../schema/config/load.js';

describe('loadMetricsConfig (merge:)', () => {
  it("should put a gauge's merge mode on its spec and leave gauges without one unset", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-merge-'));
    try {
      const file = path.join(dir, 'metrics.yaml');
      fs.writeFileSync(
        file,
        'ts_metrics:\n  gauge:\n    - name: Running\n      unit: Count\n      merge: livesum\n    - name: Plain\n      unit: Count\n',
      );
      const res = loadMetricsConfig(file);
      if (!res.ok) throw new Error(JSON.stringify(res.problems));
      expect(res.config.metrics.map((m) => [m.name, m.merge])).to.deep.equal([
        ['Running', 'livesum'],
        ['Plain', undefined],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("should give every gauge of the repo's metrics.yaml an explicit merge mode", () => {
    const res = loadMetricsConfig(path.resolve(import.meta.dirname, '..', '..', '..', '..', 'metrics.yaml'));
    if (!res.ok) throw new Error(JSON.stringify(res.problems));
    const gauges = res.config.metrics.filter((m) => m.type === 'gauge');
    expect(gauges.filter((m) => m.merge === undefined).map((m) => m.name)).to.deep.equal([]);
    expect(Object.fromEntries(gauges.filter((m) => m.merge !== 'last').map((m) => [m.name, m.merge]))).to.deep.equal({
      ts_num_requests_running: 'livesum',
      ts_num_requests_waiting: 'livesum',
      ts_num_requests_waiting_by_reason: 'livesum',
      ts_kv_cache_usage_ratio: 'livemax',
      ts_cache_config_info: 'livelast',
      HandlerTime: 'livelast',
      PredictionTime: 'livelast',
      RequestBatchSize: 'livelast',
      SizeOfImage: 'livelast',
      HandlerMethodTime: 'livelast',
      ImageDecodeTime: 'livelast',
    });
  });
});
