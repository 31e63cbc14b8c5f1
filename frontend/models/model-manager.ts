/** The registered models: register from the store, look up, scale, unregister, drain. */
import { pipelineWorkers } from '../../schema/pipeline-config.js';
import type { ModelConfigOverrides } from '../store/model-config.js';
import { modelDirConfig } from '../store/model-dir-config.js';
import { MODEL_NAME_RE } from '../store/model-store.js';
import type { ModelStore } from '../store/model-store.js';
import { BatchedModel } from './batched-model.js';
import type { ModelKind, ModelKindContext } from './model-kinds.js';
import { kindTable } from './model-kinds.js';
import { readModelIo, rememberModelIo } from './model-io.js';
import type { ServedModel } from './served-model.js';

/** A registration refused, with the HTTP status the management API answers. */
export class RegistrationError extends Error {
  /** `stageOnly`: the model only serves inside another (a pipeline's stage): with `--models all` that is a note, not an error. */
  constructor(
    readonly status: number,
    message: string,
    readonly stageOnly = false,
  ) {
    super(message);
  }
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
  /**
   * Called when the model table changes: a model registered, started, scaled or unregistered.
   * The server tells the `--api-server-count` fronts at once (their table is otherwise up to
   * 500 ms old: a model just registered answered 404 through them).
   */
  onChange: () => void = () => undefined;
  private readonly kinds: ReadonlyMap<string, ModelKind>;

  constructor(
    private readonly store: ModelStore,
    private readonly ctx: ModelKindContext,
    private readonly queueCapacity: number | undefined,
    /** Server-wide bound on the workers of all models together (`--max-workers`). */
    readonly maxWorkers = Infinity,
    /** The kinds beyond the built-in batched one, each for its `handler:` values. */
    kinds: readonly ModelKind[] = [],
  ) {
    this.kinds = kindTable(kinds);
  }

  /** Workers the models other than `except` are scaled to (their minWorkers). */
  private workersBesides(except: string | null): number {
    let n = 0;
    for (const m of this.models.values()) if (m.config.name !== except) n += m.describe().minWorkers;
    return n;
  }

  /**
   * Why scaling `name` to `min` workers (at most `max`) is refused, or null: `min` above the
   * model's maxWorkers, or the server's total above `--max-workers`.
   */
  scaleRefusal(name: string, min: number, max: number): string | null {
    if (min > max) return `min_worker ${min} exceeds maxWorkers ${max} of model ${name} (raise it with max_worker)`;
    const total = this.workersBesides(name) + min;
    if (total > this.maxWorkers)
      return `${min} workers for model ${name} would bring the server to ${total} workers, over --max-workers ${this.maxWorkers}`;
    return null;
  }

  get(name: string): ServedModel | undefined {
    return this.models.get(name);
  }
  list(): ServedModel[] {
    return [...this.models.values()].sort((a, b) => a.config.name.localeCompare(b.config.name));
  }

  /**
   * Validates and registers a model, then starts its workers; returns null (with a logged
   * note) for a kind no frontend is registered for. Throws RegistrationError.
   */
  async register(opts: RegisterOptions): Promise<ServedModel | null> {
    const model = await this.prepare(opts);
    if (model !== null) await model.start().finally(() => this.onChange());
    return model;
  }

  /**
   * Validates and registers a model without starting its workers (`start()` them next; the
   * server registers every start-up model first, so /ping counts them all while they load).
   */
  async prepare(opts: RegisterOptions): Promise<ServedModel | null> {
    if (!MODEL_NAME_RE.test(opts.name))
      throw new RegistrationError(400, `invalid model name '${opts.name}': use letters, digits, '_', '.', '-'`);
    // The url first: a url that escapes the store is a 400 whatever name it would register under.
    let dir: string;
    try {
      dir = this.store.resolve(opts.url);
    } catch (e) {
      throw new RegistrationError(400, (e as Error).message);
    }
    // TorchServe's words, and why another version is refused too (it would add that version).
    this.refuseRegistered(opts.name);
    const res = await modelDirConfig(this.store.root, opts.name, dir, opts.overrides);
    if (!res.ok)
      throw new RegistrationError(400, `invalid model config for ${opts.name}:\n  ${res.problems.join('\n  ')}`);
    // The config was read off the event loop: a registration of the same name may have won meanwhile.
    this.refuseRegistered(opts.name);
    for (const w of res.warnings) this.ctx.log('warn', w);
    const config = res.config;
    // The graph's inputs and outputs, read now: the metadata is ready and a bad graph fails the load here.
    const graph = await readModelIo(config);
    if ('problem' in graph)
      throw new RegistrationError(400, `invalid model config for ${opts.name}:\n  ${graph.problem}`);
    this.refuseRegistered(opts.name);
    // A pipeline runs a worker per replica of each stage: those count against --max-workers.
    const needed = config.pipeline !== undefined ? pipelineWorkers(config.pipeline) : config.minWorkers;
    const refused = this.scaleRefusal(opts.name, needed, Math.max(needed, config.maxWorkers));
    if (refused !== null) throw new RegistrationError(400, refused);
    let model: ServedModel;
    if (config.handler === 'generate') {
      const kind = this.kinds.get('generate');
      if (kind === undefined) {
        this.ctx.log(
          'warn',
          `model ${opts.name}: handler 'generate' needs the generation frontend, which is not available in this build; skipped`,
        );
        return null;
      }
      model = kind.create(config, this.ctx, opts.url, opts.loadedAtStartup);
    } else {
      const kind = this.kinds.get(config.handler);
      model =
        kind !== undefined
          ? kind.create(config, this.ctx, opts.url, opts.loadedAtStartup)
          : new BatchedModel(config, {
              pool: this.ctx.poolDeps,
              series: this.ctx.series,
              queueCapacity: this.queueCapacity,
              modelUrl: opts.url,
              loadedAtStartup: opts.loadedAtStartup,
              ...(this.ctx.clock !== undefined ? { clock: this.ctx.clock } : {}),
            });
    }
    rememberModelIo(config, graph.io);
    this.models.set(opts.name, model);
    this.onChange();
    return model;
  }

  /** 409 when `name` is registered already. */
  private refuseRegistered(name: string): void {
    const existing = this.models.get(name);
    if (existing !== undefined)
      throw new RegistrationError(
        409,
        `Model version ${existing.config.version} is already registered for model ${name} (a model has one version here: unregister it to register another)`,
      );
  }

  /** Unregisters a model: queued requests get 503, workers flush and exit. */
  async unregister(name: string): Promise<boolean> {
    const m = this.models.get(name);
    if (m === undefined) return false;
    this.models.delete(name);
    this.onChange();
    await m.stop();
    return true;
  }

  /**
   * Graceful stop of everything: finish queued and in-flight work, then stop workers. The
   * models stay registered until stopped, so a request that slipped in meanwhile gets the
   * model's 503, never a 404.
   */
  async stopAll(): Promise<void> {
    const all = [...this.models.values()];
    await Promise.all(all.map((m) => m.drain()));
    await Promise.all(all.map((m) => m.stop()));
    this.models.clear();
  }

  /**
   * The shutdown deadline passed: stop every model now (queued requests get 503, no worker is
   * restarted); the caller kills the workers, whose batches then fail, which ends the drain.
   */
  abortAll(): Promise<void> {
    return Promise.all([...this.models.values()].map((m) => m.stop())).then(() => undefined);
  }
}
