/** The registered models: register from the store, look up, scale, unregister, drain. */
import type { ModelConfigOverrides } from '../store/model-config.js';
import { loadModelConfig } from '../store/model-config.js';
import { MODEL_NAME_RE } from '../store/model-store.js';
import type { ModelStore } from '../store/model-store.js';
import { BatchedModel } from './batched-model.js';
import type { ModelKindContext } from './model-kinds.js';
import { modelKindFor } from './model-kinds.js';
import type { ServedModel } from './served-model.js';

/** A registration refused, with the HTTP status the management API answers. */
export class RegistrationError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

/** Options for one registration. */
export interface RegisterOptions {
  readonly name: string;
  /** Model directory relative to the store. */
  readonly url: string;
  readonly overrides?: ModelConfigOverrides;
  readonly loadedAtStartup: boolean;
}

/** Holds every registered model. */
export class ModelManager {
  private readonly models = new Map<string, ServedModel>();

  constructor(
    private readonly store: ModelStore,
    private readonly ctx: ModelKindContext,
    private readonly queueCapacity: number | undefined,
  ) {}

  get(name: string): ServedModel | undefined { return this.models.get(name); }
  list(): ServedModel[] { return [...this.models.values()].sort((a, b) => a.config.name.localeCompare(b.config.name)); }

  /**
   * Validates and registers a model, then starts its workers; returns null (with a logged
   * note) for a kind no frontend is registered for. Throws RegistrationError.
   */
  async register(opts: RegisterOptions): Promise<ServedModel | null> {
    if (!MODEL_NAME_RE.test(opts.name)) throw new RegistrationError(400, `invalid model name '${opts.name}': use letters, digits, '_', '.', '-'`);
    if (this.models.has(opts.name)) throw new RegistrationError(409, `Model ${opts.name} is already registered.`);
    let dir: string;
    try {
      dir = this.store.resolve(opts.url);
    } catch (e) {
      throw new RegistrationError(400, (e as Error).message);
    }
    const res = loadModelConfig(opts.name, dir, opts.overrides);
    if (!res.ok) throw new RegistrationError(400, `invalid model config for ${opts.name}:\n  ${res.problems.join('\n  ')}`);
    for (const w of res.warnings) this.ctx.log('warn', w);
    const config = res.config;
    let model: ServedModel;
    if (config.handler === 'generate') {
      const kind = modelKindFor('generate');
      if (kind === undefined) {
        this.ctx.log('warn', `model ${opts.name}: handler 'generate' needs the generation frontend, which is not available in this build; skipped`);
        return null;
      }
      model = kind.create(config, this.ctx, opts.url, opts.loadedAtStartup);
    } else {
      const kind = modelKindFor(config.handler);
      model = kind !== undefined
        ? kind.create(config, this.ctx, opts.url, opts.loadedAtStartup)
        : new BatchedModel(config, { pool: this.ctx.poolDeps, series: this.ctx.series, queueCapacity: this.queueCapacity, modelUrl: opts.url, loadedAtStartup: opts.loadedAtStartup });
    }
    this.models.set(opts.name, model);
    await model.start();
    return model;
  }

  /** Unregisters a model: queued requests get 503, workers flush and exit. */
  async unregister(name: string): Promise<boolean> {
    const m = this.models.get(name);
    if (m === undefined) return false;
    this.models.delete(name);
    await m.stop();
    return true;
  }

  /** Graceful stop of everything: finish queued and in-flight work, then stop workers. */
  async stopAll(): Promise<void> {
    const all = [...this.models.values()];
    await Promise.all(all.map((m) => m.drain()));
    this.models.clear();
    await Promise.all(all.map((m) => m.stop()));
  }
}
