import { expect } from 'chai';
import { accessLine } from '../../../frontend/log/access-line.js';
import type { AccessRecord } from '../../../frontend/log/log.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

const base: AccessRecord = {
  listener: 'inference',
  port: 8080,
  method: 'POST',
  path: '/predictions/mlp',
  status: 200,
  durationMs: 1.25,
  bytes: 42,
  requestId: 'r-1',
};

describe('accessLine', () => {
  it('should write the exact access_log.log line of a record', () => {
    expect(accessLine(T0, base)).to.equal(
      '{"time":"2026-01-02T03:04:05.678Z","listener":"inference","port":8080,"method":"POST","path":"/predictions/mlp","status":200,"durationMs":1.25,"bytes":42,"requestId":"r-1"}\n',
    );
  });

  it('should be byte for byte the JSON.stringify of the record after its time, for every kind of field text', () => {
    const records: AccessRecord[] = [
      base,
      { ...base, path: '/predictions/a"b\\c?q=\u0000\u001f\u007f', method: 'GET' },
      { ...base, path: '/p/\ud800/é/日本', requestId: 'id\n\t"x"' },
      { ...base, status: 0, durationMs: 0, bytes: 0, port: 0 },
      { ...base, durationMs: Number.NaN, bytes: Number.POSITIVE_INFINITY, port: -0 },
      { ...base, durationMs: 1e21, bytes: 1.5e-7, status: 503 },
      { ...base, listener: 'management', path: '', method: '' },
    ];
    const times = [T0, T0, T0 + 1, T0 + 1, 0, T0 + 0.5, 8.64e15];
    const got = records.map((r, i) => accessLine(times[i]!, r));
    const want = records.map((r, i) => `${JSON.stringify({ time: new Date(times[i]!).toISOString(), ...r })}\n`);
    expect(got).to.deep.equal(want);
  });
});
