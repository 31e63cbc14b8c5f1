/**
 * The check of a flag naming a directory the command will create when missing (`--out`,
 * `--output-dir`): a path that exists as something else is refused up front, in one shape for
 * every command, instead of failing later in mkdir or a write with a bare ENOTDIR/EEXIST.
 */
import * as fs from 'node:fs';

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
