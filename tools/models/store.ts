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
  /** Asked to rewrite (--force), but their directory holds files this tool does not write: kept. */
  readonly refused: readonly string[];
}

/** The names in `dir` that `written` (a fresh copy of the model) does not have: files a user put there. */
function foreignFiles(dir: string, written: string): string[] {
  const ours = new Set(readdirSync(written));
  return readdirSync(dir)
    .filter((f) => !ours.has(f))
    .sort();
}

/** Whether a rename failed because the target exists (made meanwhile). */
function targetExists(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST';
}

/**
 * Puts the model written in `tmp` at `target`; what happened. A directory there is never removed
 * unless forced, and then only when it holds nothing but files the model writes: one that
 * appeared meanwhile (another run) is kept, and so is one holding a user's own files.
 */
function place(
  m: StoreModel,
  tmp: string,
  target: string,
  force: boolean,
  log: (line: string) => void,
): 'written' | 'skipped' | 'refused' {
  if (force && existsSync(target)) {
    const foreign = foreignFiles(target, tmp);
    if (foreign.length > 0) {
      log(
        `${m.name}: holds ${foreign.join(', ')}, which this tool does not write; kept (move them out, or remove ${target}, to rewrite it)`,
      );
      return 'refused';
    }
    // Moved aside, not removed, until the new copy is in place: a failure in between loses nothing.
    const old = `${tmp}.old`;
    renameSync(target, old);
    try {
      renameSync(tmp, target);
    } catch (err) {
      renameSync(old, target);
      throw err;
    }
    rmSync(old, { recursive: true, force: true });
    return 'written';
  }
  try {
    renameSync(tmp, target);
    return 'written';
  } catch (err) {
    if (!targetExists(err)) throw err;
    // It was missing when this run started it: another run (or the user) made it meanwhile.
    log(`${m.name}: appeared meanwhile (another run?), kept`);
    return 'skipped';
  }
}

/** Removes `.NAME.tmp-PID` directories (and their `.old`) of runs stopped mid-write (their process is gone), for the models' names only. */
function removeAbandonedModels(root: string, models: readonly StoreModel[]): void {
  const names = new Set(models.map((m) => m.name));
  for (const entry of readdirSync(root)) {
    const m = /^\.(.+)\.tmp-([1-9][0-9]*)(?:\.old)?$/.exec(entry);
    if (m === null || !names.has(m[1]!)) continue;
    const pid = Number(m[2]);
    if (pid !== process.pid && !alive(pid)) rmSync(join(root, entry), { recursive: true, force: true });
  }
}

/** Writes the store into `dir` (created if missing); throws on an unknown name in `only`. */
export async function generateStore(dir: string, opts: GenerateStoreOptions = {}): Promise<GenerateStoreResult> {
  const all = opts.models ?? STORE_MODELS;
  const log = opts.log ?? ((): void => undefined);
  const unknown = (opts.only ?? []).filter((n) => !all.some((m) => m.name === n));
  if (unknown.length > 0)
    throw new Error(`unknown model(s): ${unknown.join(', ')} (known: ${all.map((m) => m.name).join(', ')})`);
  const chosen = opts.only === undefined ? all : all.filter((m) => opts.only!.includes(m.name));
  const root = resolve(dir);
  makeDirs(root);
  removeAbandonedModels(root, all);
  const written: string[] = [];
  const skipped: string[] = [];
  const refused: string[] = [];
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
      const done = place(m, tmp, target, opts.force === true, log);
      if (done === 'written') {
        written.push(m.name);
        log(`${m.name}: written in ${Math.round(performance.now() - t0)} ms — ${m.summary}`);
      } else if (done === 'skipped') {
        skipped.push(m.name);
      } else {
        refused.push(m.name);
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { written, skipped, refused };
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
      throw new Error(
        `${root} appeared while this run generated it, without ${missing.join(', ')}; it is not a store this tool wrote: remove it, or generate into it with tsserve models generate ${dir}`,
        { cause: err },
      );
    }
    opts.log?.(`${root} was generated meanwhile by another run (another tsserve start?); using it`);
    return { written: [], skipped: names, refused: [] };
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
