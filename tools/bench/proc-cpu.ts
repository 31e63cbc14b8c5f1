/** CPU time of a process from /proc, for benches that compare CPU per request (robust to a busy machine). */
import * as fs from 'node:fs';

/** CPU seconds (user + system) process `pid` has used so far; NaN where /proc cannot tell. */
export function procCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}
