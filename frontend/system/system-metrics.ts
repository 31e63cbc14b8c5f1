/**
 * TorchServe's system metrics (CPU, memory, disk, and GPU when one answers), collected in-process
 * on an unref'd timer with the first tick at start. Gauges are looked up and bound once at
 * start; a name not declared in metrics.yaml is simply not recorded.
 */
import { readCpuTimes, cpuPercent, readDisk, readMemory } from './host-stats.js';
import type { CpuTimes } from './host-stats.js';
import { findOnPath, queryNvidiaSmi } from './gpu-stats.js';
import type { GpuStats } from './gpu-stats.js';

/** Dimension values by dimension name (hostname is added by the metrics layer). */
export type SystemDimValues = Readonly<Record<string, string>>;

/** A bound gauge series. */
export interface SystemGaugeSeries {
  record(value: number): void;
}

/** The slice of FrontendMetrics this module uses. */
export interface SystemGaugeSource {
  getGauge(name: string): { bind(dimValues: SystemDimValues): SystemGaugeSeries } | null;
}

export interface SystemMetricsOptions {
  /** Seconds between ticks (TorchServe's `metric_time_interval`, default 60 there). */
  readonly intervalSec: number;
  /** Directory whose filesystem the disk metrics describe (the log dir); default `/`. */
  readonly diskPath?: string;
  /** nvidia-smi binary; default: looked up on PATH. `null` disables GPU metrics. */
  readonly nvidiaSmi?: string | null;
  /** /proc/meminfo path (tests point it at a fixture). */
  readonly meminfoPath?: string;
}

/** Handle returned by startSystemMetrics. */
export interface SystemMetricsHandle {
  stop(): void;
  /** Resolves when the tick in progress (GPU query included) has recorded. For tests. */
  settled(): Promise<void>;
}

/** Host-level metric names, in the order they are recorded each tick. */
export const HOST_METRIC_NAMES: readonly string[] = Object.freeze([
  'CPUUtilization',
  'MemoryUsed',
  'MemoryAvailable',
  'MemoryUtilization',
  'DiskUsage',
  'DiskAvailable',
  'DiskUtilization',
]);

/** Per-device GPU metric names (TorchServe's, dims Level:Host and DeviceId). */
export const GPU_METRIC_NAMES: readonly string[] = Object.freeze([
  'GPUUtilization',
  'GPUMemoryUsed',
  'GPUMemoryUtilization',
]);

const HOST_DIMS: SystemDimValues = Object.freeze({ Level: 'Host' });

/** Starts collecting; the first tick runs now, later ones every `intervalSec`. */
export function startSystemMetrics(metrics: SystemGaugeSource, opts: SystemMetricsOptions): SystemMetricsHandle {
  const host = new Map<string, SystemGaugeSeries>();
  for (const name of HOST_METRIC_NAMES) {
    const g = safeGetGauge(metrics, name);
    if (g) host.set(name, g.bind(HOST_DIMS));
  }
  const gpuGauges = new Map<string, { bind(d: SystemDimValues): SystemGaugeSeries }>();
  for (const name of GPU_METRIC_NAMES) {
    const g = safeGetGauge(metrics, name);
    if (g) gpuGauges.set(name, g);
  }
  const gpuSeries = new Map<string, SystemGaugeSeries>(); // `${name}\0${device}` → bound series
  let smi = opts.nvidiaSmi === undefined ? findOnPath('nvidia-smi') : opts.nvidiaSmi;
  if (gpuGauges.size === 0) smi = null;

  let prevCpu: CpuTimes | null = null;
  let gpuInFlight: Promise<void> = Promise.resolve();
  let querying = false;
  let stopped = false;

  const record = (name: string, value: number | null): void => {
    if (value === null || !Number.isFinite(value)) return;
    host.get(name)?.record(value);
  };

  const recordGpu = (stats: readonly GpuStats[]): void => {
    for (const s of stats) {
      const values: Record<string, number | null> = {
        GPUUtilization: s.utilizationPercent,
        GPUMemoryUsed: s.memoryUsedMb,
        GPUMemoryUtilization: s.memoryUtilizationPercent,
      };
      for (const [name, gauge] of gpuGauges) {
        const v = values[name];
        if (v === null || v === undefined || !Number.isFinite(v)) continue;
        const key = `${name}\0${s.deviceId}`;
        let series = gpuSeries.get(key);
        if (!series) {
          series = gauge.bind({ Level: 'Host', DeviceId: s.deviceId });
          gpuSeries.set(key, series);
        }
        series.record(v);
      }
    }
  };

  const tick = (): void => {
    try {
      // First tick: no earlier reading, so the figure is the average since boot (os.cpus()
      // counts from boot) — a real value, unlike a just-spawned process's 0.0.
      const cpu = readCpuTimes();
      record('CPUUtilization', cpuPercent(prevCpu ?? { idle: 0, total: 0 }, cpu));
      prevCpu = cpu;
      const mem = readMemory(opts.meminfoPath);
      record('MemoryUsed', mem.usedMb);
      record('MemoryAvailable', mem.availableMb);
      record('MemoryUtilization', mem.utilizationPercent);
      const disk = readDisk(opts.diskPath ?? '/') ?? (opts.diskPath ? readDisk('/') : null);
      if (disk) {
        record('DiskUsage', disk.usedGb);
        record('DiskAvailable', disk.availableGb);
        record('DiskUtilization', disk.utilizationPercent);
      }
    } catch {
      // A reading failed unexpectedly; this tick records what it had, the next one retries.
    }
    if (smi && !querying) {
      const binary = smi;
      querying = true;
      gpuInFlight = queryNvidiaSmi(binary).then((stats) => {
        querying = false;
        if (stats === null) {
          smi = null; // present but not answering (no driver, no device): stop asking
          return;
        }
        if (stopped) return;
        try {
          recordGpu(stats);
        } catch {
          // a sink threw despite its contract; never let it become an unhandled rejection
        }
      });
    }
  };

  tick();
  const timer = setInterval(tick, Math.max(1, opts.intervalSec) * 1000);
  timer.unref();
  return {
    stop(): void {
      stopped = true;
      clearInterval(timer);
    },
    settled: () => gpuInFlight,
  };
}

function safeGetGauge(
  metrics: SystemGaugeSource,
  name: string,
): { bind(d: SystemDimValues): SystemGaugeSeries } | null {
  try {
    return metrics.getGauge(name);
  } catch {
    return null;
  }
}
