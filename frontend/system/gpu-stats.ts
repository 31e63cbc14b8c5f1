/**
 * GPU readings through `nvidia-smi`, the one source that needs no native binding. Absent binary,
 * a failing call or a field the driver reports as `[N/A]` all yield no value — never a string a
 * sink cannot parse (TorchServe's `GPUUtilization.Percent:None` on Apple MPS).
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** One device's readings; a field is null when the driver does not report it. */
export interface GpuStats {
  readonly deviceId: string;
  readonly utilizationPercent: number | null;
  readonly memoryUsedMb: number | null;
  readonly memoryUtilizationPercent: number | null;
}

/** The query we send; parseNvidiaSmi expects exactly these columns in this order. */
export const NVIDIA_SMI_ARGS: readonly string[] = Object.freeze([
  '--query-gpu=index,utilization.gpu,memory.used,memory.total',
  '--format=csv,noheader,nounits',
]);

/** Finds an executable on PATH without running anything; null when absent. */
export function findOnPath(name: string, envPath = process.env['PATH'] ?? ''): string | null {
  for (const dir of envPath.split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here; keep looking
    }
  }
  return null;
}

/**
 * Parses `index, utilization.gpu, memory.used, memory.total` lines. Memory utilization is
 * used / total (what a dashboard reader expects from "memory utilization"), not nvidia-smi's
 * `utilization.memory`, which is memory-controller busy time. Lines that do not fit are skipped.
 */
export function parseNvidiaSmi(text: string): GpuStats[] {
  const out: GpuStats[] = [];
  for (const line of text.split('\n')) {
    const cols = line.split(',').map((c) => c.trim());
    if (cols.length !== 4 || !/^\d+$/.test(cols[0]!)) continue;
    const util = num(cols[1]!);
    const used = num(cols[2]!);
    const total = num(cols[3]!);
    out.push({
      deviceId: cols[0]!,
      utilizationPercent: util !== null && util <= 100 ? util : null,
      memoryUsedMb: used,
      memoryUtilizationPercent:
        used !== null && total !== null && total > 0 && used <= total ? (100 * used) / total : null,
    });
  }
  return out;
}

function num(s: string): number | null {
  if (!/^\d+(\.\d+)?$/.test(s)) return null; // `[N/A]`, `[Not Supported]`, empty
  return Number(s);
}

/** Runs the query once; resolves to null when the binary fails, times out or answers nothing. */
export function queryNvidiaSmi(binary: string, timeoutMs = 5000): Promise<GpuStats[] | null> {
  return new Promise((resolve) => {
    execFile(binary, NVIDIA_SMI_ARGS as string[], { timeout: timeoutMs, windowsHide: true }, (err, stdout) => {
      if (err) return resolve(null);
      const stats = parseNvidiaSmi(String(stdout));
      resolve(stats.length > 0 ? stats : null);
    });
  });
}
