/**
 * Resolves a path named in model-config (handler module, ONNX file) inside the model directory.
 * Both a lexical `..` escape and a symlink whose target leaves the directory are refused: the
 * worker never loads code or weights from outside the model store.
 */
import * as fs from 'fs';
import * as path from 'path';

/** A resolved file, or why it was refused. */
export type ResolvedPath =
  { readonly ok: true; readonly file: string } | { readonly ok: false; readonly error: string };

/** True when `child` is `dir` itself or below it (both absolute and normalized). */
export function isInside(dir: string, child: string): boolean {
  const rel = path.relative(dir, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * Resolves `spec` (relative to `modelDir`) to the real path of an existing regular file inside
 * the real model directory. `extensions` are tried in order when `spec` itself is not a file
 * (`handler` → `handler.js`).
 */
export function resolveInModelDir(modelDir: string, spec: string, extensions: readonly string[] = []): ResolvedPath {
  if (typeof spec !== 'string' || spec === '' || spec.includes('\0')) {
    return { ok: false, error: `invalid path ${JSON.stringify(spec)}` };
  }
  if (path.isAbsolute(spec)) {
    return { ok: false, error: `"${spec}" must be relative to the model directory` };
  }
  let realDir: string;
  try {
    realDir = fs.realpathSync(modelDir);
  } catch {
    return { ok: false, error: `model directory ${modelDir} does not exist` };
  }
  const lexical = path.resolve(realDir, spec);
  if (!isInside(realDir, lexical)) {
    return { ok: false, error: `"${spec}" resolves outside the model directory ${realDir}` };
  }
  for (const candidate of [lexical, ...extensions.map((e) => lexical + e)]) {
    let real: string;
    try {
      real = fs.realpathSync(candidate);
    } catch {
      continue; // absent (or a dangling link): try the next extension
    }
    if (!isInside(realDir, real)) {
      return { ok: false, error: `"${spec}" is a symlink to ${real}, outside the model directory ${realDir}` };
    }
    if (fs.statSync(real).isFile()) return { ok: true, file: real };
  }
  return { ok: false, error: `"${spec}" not found in the model directory ${realDir}` };
}
