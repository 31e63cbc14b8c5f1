import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSystemMetrics, HOST_METRIC_NAMES } from '../../../frontend/system/system-metrics.js';
import type { SystemDimValues, SystemGaugeSource } from '../../../frontend/system/system-metrics.js';
import type { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';

// Compile-time check: the real FrontendMetrics is a valid source for startSystemMetrics.
export const frontendMetricsFits = (m: FrontendMetrics): SystemGaugeSource => m;

interface Call {
  readonly name: string;
  readonly dims: SystemDimValues;
  readonly value: number;
}

/** A fake FrontendMetrics: records every (name, dims, value); `declared` limits getGauge. */
function fakeSink(declared?: readonly string[]): { sink: SystemGaugeSource; calls: Call[]; asked: string[] } {
  const calls: Call[] = [];
  const asked: string[] = [];
  const sink: SystemGaugeSource = {
    getGauge(name) {
      asked.push(name);
      if (declared && !declared.includes(name)) return null;
      return { bind: (dims) => ({ record: (value) => void calls.push({ name, dims, value }) }) };
    },
  };
  return { sink, calls, asked };
}

const MB = 1024 * 1024;
const GB = 1024 * 1024 * 1024;

describe('startSystemMetrics', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-sysm-'));
  });
  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('should record exactly the seven host metrics once at start, with Level=Host, when no GPU answers', () => {
    const { sink, calls } = fakeSink();
    const h = startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: null, diskPath: tmp });
    h.stop();
    expect(calls.map((c) => c.name)).to.deep.equal([
      'CPUUtilization',
      'MemoryUsed',
      'MemoryAvailable',
      'MemoryUtilization',
      'DiskUsage',
      'DiskAvailable',
      'DiskUtilization',
    ]);
    expect(HOST_METRIC_NAMES).to.deep.equal(calls.map((c) => c.name));
    for (const c of calls) expect(c.dims).to.deep.equal({ Level: 'Host' });
  });

  it('should record values within physical bounds', () => {
    const { sink, calls } = fakeSink();
    const h = startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: null, diskPath: tmp });
    h.stop();
    const v = Object.fromEntries(calls.map((c) => [c.name, c.value])) as Record<string, number>;
    for (const name of ['CPUUtilization', 'MemoryUtilization', 'DiskUtilization']) {
      expect(v[name], name).to.be.within(0, 100);
    }
    const totalMb = os.totalmem() / MB;
    expect(v['MemoryUsed']).to.be.within(0, totalMb);
    expect(v['MemoryAvailable']).to.be.within(0, totalMb);
    // used + available is the machine's total memory (MemTotal == os.totalmem() on Linux)
    expect(v['MemoryUsed']! + v['MemoryAvailable']!).to.be.closeTo(totalMb, 1);
    expect(v['MemoryUtilization']).to.be.closeTo((100 * v['MemoryUsed']!) / totalMb, 0.1);
    const st = fs.statfsSync(tmp);
    const sizeGb = (st.blocks * st.bsize) / GB;
    expect(v['DiskUsage']).to.be.within(0, sizeGb);
    expect(v['DiskAvailable']).to.be.within(0, sizeGb);
    expect(v['DiskUsage']! + v['DiskAvailable']!).to.be.at.most(sizeGb + 1e-9);
  });

  it('should compute memory from /proc/meminfo MemTotal and MemAvailable exactly', () => {
    const meminfo = path.join(tmp, 'meminfo');
    fs.writeFileSync(
      meminfo,
      'MemTotal:        8388608 kB\nMemFree:         1048576 kB\nMemAvailable:    2097152 kB\n',
    );
    const { sink, calls } = fakeSink(['MemoryUsed', 'MemoryAvailable', 'MemoryUtilization']);
    startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: null, meminfoPath: meminfo }).stop();
    expect(calls).to.deep.equal([
      { name: 'MemoryUsed', dims: { Level: 'Host' }, value: 6144 },
      { name: 'MemoryAvailable', dims: { Level: 'Host' }, value: 2048 },
      { name: 'MemoryUtilization', dims: { Level: 'Host' }, value: 75 },
    ]);
  });

  it('should skip metrics not declared in metrics.yaml (getGauge returns null)', () => {
    const { sink, calls, asked } = fakeSink(['DiskUtilization']);
    startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: null, diskPath: tmp }).stop();
    expect(calls.map((c) => c.name)).to.deep.equal(['DiskUtilization']);
    expect(asked).to.deep.equal([...HOST_METRIC_NAMES, 'GPUUtilization', 'GPUMemoryUsed', 'GPUMemoryUtilization']);
  });

  it('should record GPU metrics per device from nvidia-smi, omitting fields reported as [N/A]', async () => {
    const smi = path.join(tmp, 'nvidia-smi');
    fs.writeFileSync(smi, '#!/bin/sh\nprintf "0, 35, 1024, 4096\\n1, [N/A], 512, 8192\\n"\n', { mode: 0o755 });
    const { sink, calls } = fakeSink(['GPUUtilization', 'GPUMemoryUsed', 'GPUMemoryUtilization']);
    const h = startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: smi });
    await h.settled();
    h.stop();
    expect(calls).to.deep.equal([
      { name: 'GPUUtilization', dims: { Level: 'Host', DeviceId: '0' }, value: 35 },
      { name: 'GPUMemoryUsed', dims: { Level: 'Host', DeviceId: '0' }, value: 1024 },
      { name: 'GPUMemoryUtilization', dims: { Level: 'Host', DeviceId: '0' }, value: 25 },
      { name: 'GPUMemoryUsed', dims: { Level: 'Host', DeviceId: '1' }, value: 512 },
      { name: 'GPUMemoryUtilization', dims: { Level: 'Host', DeviceId: '1' }, value: 6.25 },
    ]);
  });

  it('should record no GPU metric when nvidia-smi exists but fails', async () => {
    const smi = path.join(tmp, 'nvidia-smi');
    fs.writeFileSync(
      smi,
      '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver." >&2\nexit 9\n',
      {
        mode: 0o755,
      },
    );
    const { sink, calls } = fakeSink();
    const h = startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: smi, diskPath: tmp });
    await h.settled();
    h.stop();
    expect(calls.map((c) => c.name)).to.deep.equal([...HOST_METRIC_NAMES]);
  });

  it('should not throw when a sink throws from getGauge', () => {
    const sink: SystemGaugeSource = {
      getGauge() {
        throw new Error('boom');
      },
    };
    expect(() => startSystemMetrics(sink, { intervalSec: 3600, nvidiaSmi: null }).stop()).to.not.throw();
  });
});
