import { expect } from 'chai';
import { cpuPercent, parseMeminfo } from '../../../frontend/system/host-stats.js';
import { findOnPath, parseNvidiaSmi } from '../../../frontend/system/gpu-stats.js';

describe('cpuPercent', () => {
  it('should give the busy share of the time elapsed between two readings', () => {
    expect(cpuPercent({ idle: 1000, total: 2000 }, { idle: 1300, total: 3000 })).to.equal(70);
  });

  it('should give null when no time elapsed or the counters went backwards', () => {
    expect(cpuPercent({ idle: 5, total: 10 }, { idle: 5, total: 10 })).to.equal(null);
    expect(cpuPercent({ idle: 5, total: 10 }, { idle: 4, total: 20 })).to.equal(null);
  });
});

describe('parseMeminfo', () => {
  it('should give null when MemAvailable is missing (pre-3.14 kernels)', () => {
    expect(parseMeminfo('MemTotal: 1024 kB\nMemFree: 512 kB\n')).to.equal(null);
  });

  it('should compute used as MemTotal minus MemAvailable', () => {
    expect(parseMeminfo('MemTotal:  4096 kB\nMemAvailable:  1024 kB\n')).to.deep.equal({
      usedMb: 3,
      availableMb: 1,
      utilizationPercent: 75,
    });
  });
});

describe('parseNvidiaSmi', () => {
  it('should parse each device line and null out unsupported fields', () => {
    expect(parseNvidiaSmi('0, 99, 100, 400\n1, [Not Supported], [N/A], 400\n\n')).to.deep.equal([
      { deviceId: '0', utilizationPercent: 99, memoryUsedMb: 100, memoryUtilizationPercent: 25 },
      { deviceId: '1', utilizationPercent: null, memoryUsedMb: null, memoryUtilizationPercent: null },
    ]);
  });

  it('should skip lines that are not device rows', () => {
    expect(parseNvidiaSmi('No devices were found\n')).to.deep.equal([]);
  });
});

describe('findOnPath', () => {
  it('should find sh and not a made-up name', () => {
    expect(findOnPath('sh', '/nonexistent:/bin:/usr/bin')).to.match(/\/sh$/);
    expect(findOnPath('tsserve-no-such-binary', '/bin:/usr/bin')).to.equal(null);
  });
});
