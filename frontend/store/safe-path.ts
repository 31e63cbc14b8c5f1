/**
 * Path containment for the model store: every path taken from a request or a model-config
 * must resolve inside its root, so a model can never point the server at files elsewhere.
 */
import * as fs from 'fs';
import * as path from 'path';

/** Thrown (only by the store, caught at its edge) when a path would leave its root. */
export class PathEscapeError extends Error {}

/** True when `child` equals `root` or lies under it (both absolute, normalized). */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves `relative` under `root`, rejecting absolute paths, `..` segments and symlinks whose
 * target leaves the root. `root` must exist. The returned path is the real path when the
 * target exists (so later opens cannot be redirected), else the lexical one.
 */
export function resolveInside(root: string, relative: string): string {
  if (relative === '' || path.isAbsolute(relative) || /^[a-zA-Z]:[\\/]/.test(relative)) {
    throw new PathEscapeError(`path '${relative}' must be relative to ${root}`);
  }
  if (relative.split(/[\\/]/).includes('..')) {
    throw new PathEscapeError(`path '${relative}' must not contain '..'`);
  }
  const realRoot = fs.realpathSync(root);
  const lexical = path.resolve(realRoot, relative);
  if (!isInside(realRoot, lexical)) throw new PathEscapeError(`path '${relative}' leaves ${root}`);
  let real: string;
  try {
    real = fs.realpathSync(lexical);
  } catch {
    return lexical; // does not exist (yet): nothing to follow
  }
  if (!isInside(realRoot, real)) {
    throw new PathEscapeError(`path '${relative}' is a symlink leading outside ${root}`);
  }
  return real;
}
