/**
 * Size rotation of one log file, as log4j's RollingFile does it: `.keep` is removed, `.1` …
 * `.keep-1` move up one, the file becomes `.1` (with `keep` 0 the file is just removed). The
 * steps are worked out once and run either with fs.promises or synchronously, so the two paths
 * of rotating-file.ts can never rotate differently. A missing `.N` or file is no failure; any
 * other error (a `.N` that is a directory, a read-only directory) is thrown to the caller.
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';

/**
 * A rotation as steps, for the asynchronous and the synchronous path alike: remove `drop`, then
 * the renames in order (oldest first, the file itself last). `present` is the directory's
 * listing: one listing instead of keep-1 renames that mostly fail with ENOENT.
 */
function rotationSteps(
  p: string,
  keep: number,
  present: ReadonlySet<string>,
): { drop: string; renames: [string, string][] } {
  if (keep <= 0) return { drop: p, renames: [] };
  const base = nodePath.basename(p);
  const renames: [string, string][] = [];
  for (let i = keep - 1; i >= 1; i--) if (present.has(`${base}.${i}`)) renames.push([`${p}.${i}`, `${p}.${i + 1}`]);
  renames.push([p, `${p}.1`]);
  return { drop: `${p}.${keep}`, renames };
}

const absent = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Rotate `p` with fs.promises (off the event loop); throws what a step that fails throws. */
export async function rotateAsync(p: string, keep: number): Promise<void> {
  const present = keep > 0 ? new Set(await fs.promises.readdir(nodePath.dirname(p))) : new Set<string>();
  const steps = rotationSteps(p, keep, present);
  await fs.promises.rm(steps.drop, { force: true });
  for (const [from, to] of steps.renames) {
    try {
      await fs.promises.rename(from, to);
    } catch (err) {
      if (!absent(err)) throw err;
    }
  }
}

/** Rotate `p` synchronously (a sync log, or a process that is exiting); throws what a step that fails throws. */
export function rotateSync(p: string, keep: number): void {
  const present = keep > 0 ? new Set(fs.readdirSync(nodePath.dirname(p))) : new Set<string>();
  const steps = rotationSteps(p, keep, present);
  fs.rmSync(steps.drop, { force: true });
  for (const [from, to] of steps.renames) {
    try {
      fs.renameSync(from, to);
    } catch (err) {
      if (!absent(err)) throw err;
    }
  }
}
