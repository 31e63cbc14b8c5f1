/**
 * Writes the demo model store: one directory per model of STORE_MODELS, each written into a
 * temporary sibling and renamed into place, so an interrupted run never leaves a half model.
 * Deterministic: the same run twice writes byte-identical files.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { makeDirs } from '../cli/dir-arg.js';
import { basename, dirname, join, resolve } from 'node:path';
import type { StoreModel } from './store-model.js';
import { STORE_MODELS } from './store-models.js';

/** Options of `generateStore`. */
export interface GenerateStoreOptions {
  /** Rewrite models whose directory already exists (default: keep them). */
  readonly force?: boolean;
  /** Only these model names (default: all of `models`). */
  readonly only?: readonly string[];
  /** The models to write (default STORE_MODELS). */
  readonly models?: readonly StoreModel[];
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

/** What happened to each model. */
export interface GenerateStoreResult {
  readonly written: readonly string[];
  readonly skipped: readonly string[];
}

/** Writes the store into `dir` (created if missing); throws on an unknown name in `only`. */
export async function generateStore(dir: string, opts: GenerateStoreOptions = {}): Promise<GenerateStoreResult> {
  const all = opts.models ?? STORE_MODELS;
  const log = opts.log ?? ((): void => undefined);
  const unknown = (opts.only ?? []).filter((n) => !all.some((m) => m.name === n));
  if (unknown.length > 0) throw new Error(`unknown model(s): ${unknown.join(', ')} (known: ${all.map((m) => m.name).join(', ')})`);
  const chosen = opts.only === undefined ? all : all.filter((m) => opts.only!.includes(m.name));
  const root = resolve(dir);
  makeDirs(root);
  const written: string[] = [];
  const skipped: string[] = [];
  for (const m of chosen) {
    const target = join(root, m.name);
    if (existsSync(target) && opts.force !== true) {
      skipped.push(m.name);
      log(`${m.name}: exists, kept (use --force to rewrite)`);
      continue;
    }
    const tmp = join(root, `.${m.name}.tmp-${process.pid}`);
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    try {
      const t0 = performance.now();
      await m.write(tmp);
      rmSync(target, { recursive: true, force: true });
      renameSync(tmp, target);
      written.push(m.name);
      log(`${m.name}: written in ${Math.round(performance.now() - t0)} ms — ${m.summary}`);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }
  return { written, skipped };
}

/** Runs of `generateNewStore` in this process so far: each writes its own temporary sibling. */
let newStoreRuns = 0;

/**
 * Writes a whole new store at `dir` (which must not exist): into a temporary sibling, renamed
 * into place once every model is written. `tsserve start` generates its missing default store
 * so; written in place, a first run stopped with Ctrl-C left a store of the first few models,
 * which every later start took as complete and served without the others.
 *
 * Two runs at once (two `npm start` on a fresh clone) both generate; the first rename wins. The
 * other finds `dir` there when it renames: a store holding every model it was asked for is the
 * winner's (only complete stores are renamed into place), and is used as is; anything else at
 * `dir` is an error naming what it lacks.
 */
export async function generateNewStore(dir: string, opts: GenerateStoreOptions = {}): Promise<GenerateStoreResult> {
  const root = resolve(dir);
  const run = newStoreRuns++;
  const tmp = `${root}.tmp-${process.pid}${run === 0 ? '' : `-${run}`}`;
  removeAbandoned(root);
  rmSync(tmp, { recursive: true, force: true });
  let r: GenerateStoreResult;
  try {
    r = await generateStore(tmp, opts);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  try {
    renameSync(tmp, root);
    return r;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    const names = [...r.written, ...r.skipped];
    const missing = names.filter((n) => !existsSync(join(root, n)));
    if (missing.length > 0) {
      throw new Error(`${root} appeared while this run generated it, without ${missing.join(', ')}; it is not a store this tool wrote: remove it, or generate into it with tsserve models generate ${dir}`, { cause: err });
    }
    opts.log?.(`${root} was generated meanwhile by another run (another tsserve start?); using it`);
    return { written: [], skipped: names };
  }
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the `<store>.tmp-PID[-RUN]` directories of earlier runs that were stopped mid-generation (their process is gone). */
function removeAbandoned(root: string): void {
  const prefix = `${basename(root)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(root));
  } catch {
    return;
  }
  for (const name of names) {
    // Only the exact form this module writes: Number() alone also read `+7`, `0x1f` and `1e3` as pids.
    const m = /^([1-9][0-9]*)(?:-[1-9][0-9]*)?$/.exec(name.slice(prefix.length));
    if (!name.startsWith(prefix) || m === null) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && !alive(pid)) rmSync(join(dirname(root), name), { recursive: true, force: true });
  }
}
