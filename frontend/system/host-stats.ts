/**
 * Host readings taken in-process (no collector subprocess per tick, unlike TorchServe): CPU from
 * `os.cpus()` time deltas, memory from `/proc/meminfo`, disk from `statfs`. Each reader returns
 * null when the source is unavailable, so a caller records nothing rather than a made-up value.
 */
import * as fs from 'fs';
import * as os from 'os';

const MB = 1024 * 1024;
const GB = 1024 * 1024 * 1024;

/** Summed CPU times (ms) across all cores at one instant. */
export interface CpuTimes {
  readonly idle: number;
  readonly total: number;
}

/** Reads the summed busy and idle times of every core. */
export function readCpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/**
 * Percent of CPU time spent busy between two readings, in [0, 100]; null when no time passed
 * (two readings inside one kernel tick) or the counters went backwards (CPU hot-unplug).
 */
export function cpuPercent(prev: CpuTimes, next: CpuTimes): number | null {
  const total = next.total - prev.total;
  const idle = next.idle - prev.idle;
  if (!(total > 0) || idle < 0 || idle > total) return null;
  return clampPercent(100 * (1 - idle / total));
}

/** Memory in megabytes and percent used. */
export interface MemoryStats {
  readonly usedMb: number;
  readonly availableMb: number;
  readonly utilizationPercent: number;
}

/**
 * Parses `/proc/meminfo` text. Used = MemTotal − MemAvailable, the figure `free` and psutil's
 * percent use (page cache the kernel can drop is not "used"). Null without both fields.
 */
export function parseMeminfo(text: string): MemoryStats | null {
  const kb = (field: string): number | null => {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  };
  const total = kb('MemTotal');
  const available = kb('MemAvailable');
  if (total === null || available === null || total <= 0 || available > total) return null;
  return memoryFromBytes(total, available);
}

/** Reads memory from /proc/meminfo when it has MemAvailable, else from `os` (free ≈ available). */
export function readMemory(meminfoPath = '/proc/meminfo'): MemoryStats {
  try {
    const parsed = parseMeminfo(fs.readFileSync(meminfoPath, 'utf8'));
    if (parsed) return parsed;
  } catch {
    // Not Linux (or /proc not mounted): fall through to the portable figures.
  }
  return memoryFromBytes(os.totalmem(), os.freemem());
}

function memoryFromBytes(total: number, available: number): MemoryStats {
  return {
    usedMb: (total - available) / MB,
    availableMb: available / MB,
    utilizationPercent: clampPercent((100 * (total - available)) / total),
  };
}

/** Disk usage of the filesystem holding a path, in gigabytes and percent. */
export interface DiskStats {
  readonly usedGb: number;
  readonly availableGb: number;
  readonly utilizationPercent: number;
}

/**
 * Reads the filesystem of `path` like psutil's disk_usage: used = blocks − free, available =
 * blocks available to unprivileged users, percent = used / (used + available). Null on error.
 */
export function readDisk(path: string): DiskStats | null {
  try {
    const s = fs.statfsSync(path);
    const used = (s.blocks - s.bfree) * s.bsize;
    const avail = s.bavail * s.bsize;
    if (!(used + avail > 0)) return null;
    return {
      usedGb: used / GB,
      availableGb: avail / GB,
      utilizationPercent: clampPercent((100 * used) / (used + avail)),
    };
  } catch {
    return null;
  }
}

function clampPercent(v: number): number {
  return v < 0 ? 0 : v > 100 ? 100 : v;
}
