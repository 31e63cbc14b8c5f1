/**
 * The check of a flag naming a directory the command will create when missing (`--out`,
 * `--output-dir`): a path that exists as something else is refused up front, in one shape for
 * every command, instead of failing later in mkdir or a write with a bare ENOTDIR/EEXIST.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * `--FLAG: DIR exists and is not a directory[ (why)]` when `dir` exists and is not a directory,
 * else null. A path that cannot be stat'ed (absent, or under a file) is left to the mkdir that
 * follows, which names its own error.
 */
export function notADirectory(flag: string, dir: string, why?: string): string | null {
  let isDir: boolean;
  try {
    isDir = fs.statSync(dir).isDirectory();
  } catch {
    return null;
  }
  return isDir ? null : `--${flag}: ${dir} exists and is not a directory${why === undefined ? '' : ` (${why})`}`;
}

/**
 * Creates `dir` and its missing parents, one plain mkdir per missing level, throwing the first
 * error. Node 20's `mkdirSync(dir, {recursive: true})` retries forever when mkdir answers ENOENT
 * under a parent that exists (/proc, /sys: file systems that take no new entries), so a command
 * given such a path spun at 100% CPU instead of failing.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d);
    } catch (e) {
      // Made by someone else meanwhile: as good as made here.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(d).isDirectory()) throw e;
    }
  }
}
