/**
 * The model store: a directory holding one sub-directory per model, with its `model-config.yaml`
 * or, for a Hugging Face export, its `config.json` (frontend/store/hf-model-dir.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { MODEL_CONFIG_FILE } from './model-config.js';
import { resolveInside } from './safe-path.js';
import { HF_CONFIG_FILE } from './hf-model-dir.js';

/** Names a model may have: used in URLs and metric labels. */
export const MODEL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A url with a scheme (`https://`, `s3://`, `file://`): what TorchServe would download. */
const SCHEME_URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** One model directory found in the store. */
export interface StoreEntry {
  readonly name: string;
  readonly dir: string;
}

/** Read access to a model store rooted at an existing directory. */
export class ModelStore {
  /** Absolute real path of the store. */
  readonly root: string;

  constructor(root: string) {
    this.root = fs.realpathSync(root);
  }

  /**
   * Every sub-directory holding a model-config.yaml or a config.json, sorted by name. A symlink leading outside
   * the store is never listed; `onSkip` hears of each one, with why.
   */
  list(onSkip?: (name: string, why: string) => void): StoreEntry[] {
    const out: StoreEntry[] = [];
    for (const ent of fs.readdirSync(this.root, { withFileTypes: true })) {
      if (!ent.isDirectory() && !ent.isSymbolicLink()) continue;
      if (!MODEL_NAME_RE.test(ent.name)) continue;
      let dir: string;
      try {
        dir = resolveInside(this.root, ent.name);
      } catch (e) {
        onSkip?.(ent.name, e instanceof Error ? e.message : String(e));
        continue;
      }
      if (fs.existsSync(path.join(dir, MODEL_CONFIG_FILE)) || fs.existsSync(path.join(dir, HF_CONFIG_FILE)))
        out.push({ name: ent.name, dir });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** For a TorchServe url naming a .mar archive: what is served instead, and the directory it may mean. */
  private marHint(relDir: string): string {
    if (!relDir.endsWith('.mar')) return '';
    const base = relDir.slice(0, -'.mar'.length);
    let dir: string | null = null;
    try {
      dir = base === '' ? null : resolveInside(this.root, base);
    } catch {
      /* not a directory it could mean */
    }
    const named = dir !== null && fs.existsSync(path.join(dir, MODEL_CONFIG_FILE)) ? ` (url=${base} is one)` : '';
    return `: tsserve serves model directories, not .mar archives${named}`;
  }

  /** Resolves a user-given model directory (relative to the store); throws PathEscapeError. */
  resolve(relDir: string): string {
    // TorchServe downloads a url like https://…/m.mar or s3://…; read as a path it was 'not found'
    // (or, with a store directory named 'file:', loaded from there), never saying why.
    if (SCHEME_URL.test(relDir))
      throw new Error(
        `url '${relDir}' is a URL; tsserve downloads no model: give a model directory inside the model store ${this.root}`,
      );
    const dir = resolveInside(this.root, relDir.replace(/\/+$/, ''));
    if (!fs.existsSync(dir))
      throw new Error(`model directory '${relDir}' not found in ${this.root}${this.marHint(relDir)}`);
    // A url naming a file (mlp/model.onnx) is a common slip: say so rather than 'not found'.
    if (!fs.statSync(dir).isDirectory())
      throw new Error(`'${relDir}' is a file; give the model directory that holds it and its model-config.yaml`);
    return dir;
  }
}
