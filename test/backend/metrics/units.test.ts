import { expect } from 'chai';
import { convertUnit, isSizeUnit, isTimeUnit, mapUnit } from '../../../backend/metrics/units.js';

describe('mapUnit', () => {
  it("should map TorchServe's shorthands and pass anything else through unchanged", () => {
    const given = ['ms', 's', 'percent', 'count', 'MB', 'GB', 'kB', 'B', '', 'custom_unit', 'Milliseconds', 'toString'];
    expect(given.map(mapUnit)).to.deep.equal([
      'Milliseconds',
      'Seconds',
      'Percent',
      'Count',
      'Megabytes',
      'Gigabytes',
      'Kilobytes',
      'Bytes',
      'unit',
      'custom_unit',
      'Milliseconds',
      'toString',
    ]);
  });
});

describe('isTimeUnit / isSizeUnit', () => {
  it('should accept exactly ms, s and B, kB, MB, GB', () => {
    expect(['ms', 's', 'ns', 'MS', '', 'min'].map(isTimeUnit)).to.deep.equal([true, true, false, false, false, false]);
    expect(['B', 'kB', 'MB', 'GB', 'TB', 'kb', 'mb'].map(isSizeUnit)).to.deep.equal([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
});

describe('convertUnit', () => {
  it('should shift a time by its decimal digits, so 0.043 s is exactly 43 ms (it was 42.99999999999999)', () => {
    const cases: Array<[number, string, string]> = [
      [0.043, 's', 'ms'],
      [0.051, 's', 'Milliseconds'],
      [1234, 'us', 'ms'],
      [0.005, 'ms', 'us'],
      [0.001, 's', 'us'],
      [0.009, 'ms', 's'],
      [1e-7, 's', 'ms'],
      [-0.043, 's', 'ms'],
      [2, 'ms', 'ms'],
      [1.5, 'MB', 'kB'],
      [0.1, 'GB', 'MB'],
      [5, 'ms', 'Count'],
    ];
    expect(cases.map(([v, f, t]) => convertUnit(v, f, t))).to.deep.equal([
      43,
      51,
      1.234,
      5,
      1000,
      0.000009,
      0.0001,
      -43,
      2,
      1536,
      102.4,
      undefined,
    ]);
  });

  it("should know a time unit in every spelling the sinks know, so unit: sec takes addTime(5, 'ms') as 0.005", () => {
    // Regression: only ms/Milliseconds/s/Seconds/us/Microseconds matched; 5 ms on a `sec` metric stayed 5 (s), and StatsD sent 5000|ms.
    const cases: Array<[number, string, string]> = [
      [5, 'ms', 'sec'],
      [0.043, 's', 'msec'],
      [1.5, 'ms', 'µs'],
      [2, 's', 'seconds'],
      [7, 'ms', 'MILLISECONDS'],
      [3, 'ms', 'ns'],
      [3, 's', 'minutes'],
    ];
    expect(cases.map(([v, f, t]) => convertUnit(v, f, t))).to.deep.equal([0.005, 43, 1500, 2, 7, 3000000, undefined]);
  });

  it('should know a size unit in any case and spelling (KB, KiB, megabytes), 1024-based as TorchServe', () => {
    // Regression: addSize(2, 'MB') on a metric declared `unit: KB` recorded 2.
    const cases: Array<[number, string, string]> = [
      [2, 'MB', 'KB'],
      [2, 'MB', 'KiB'],
      [512, 'kB', 'megabytes'],
      [3, 'MB', 'bytes'],
      [1, 'MB', 'kbit'],
    ];
    expect(cases.map(([v, f, t]) => convertUnit(v, f, t))).to.deep.equal([2048, 2048, 0.5, 3145728, undefined]);
  });

  it('should convert alike past the cache of worked-out units (300 other units seen first)', () => {
    const others = Array.from({ length: 300 }, (_, i) => convertUnit(1, `unit${i}`, 'ms'));
    expect([
      others.every((x) => x === undefined),
      convertUnit(5, 'ms', 'sec'),
      convertUnit(2, 'MB', 'KiB'),
      convertUnit(1, 'KiB', 'Count'),
    ]).to.deep.equal([true, 0.005, 2048, undefined]);
  });

  it('should give the written decimal for every thousandth from 0.001 to 1.999 between s, ms and us', () => {
    const off: string[] = [];
    for (let i = 1; i < 2000; i++) {
      const v = i / 1000;
      const written = String(v);
      const checks: Array<[string, string, number]> = [
        ['s', 'ms', i],
        ['ms', 'us', i],
        ['s', 'us', i * 1000],
      ];
      for (const [f, t, want] of checks)
        if (convertUnit(v, f, t) !== want) off.push(`${written} ${f}→${t}: ${convertUnit(v, f, t)}`);
    }
    expect(off).to.deep.equal([]);
  });
});
