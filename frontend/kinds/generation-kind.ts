/**
 * The generation frontend as a model kind: `handler: generate` models become GenerationModels,
 * their engines feed the periodic stat log, and the OpenAI routes (`/v1/completions`,
 * `/v1/chat/completions`, `/v1/models`) mount on the inference listener.
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { ModelKind, ModelKindContext } from '../models/model-kinds.js';
import type { ServedModel } from '../models/served-model.js';
import { openaiRouter } from '../openai/router.js';
import { GenerationModel } from '../generation/generation-model.js';
import { StatLogTicker } from '../generation/stat-log-ticker.js';
import { checkEngineMetrics } from '../generation/engine-series.js';
import { inferenceSeriesOf } from '../models/inference-count.js';
import { engineArgOfFlag } from '../../schema/engine-args.js';
import { vllmSwitchOn } from '../../schema/vllm-env.js';

/** Options of the generation frontend. */
export interface GenerationFrontendOptions {
  /** Seconds between stat lines (`--log-stats-interval`, env TS_LOG_STATS_INTERVAL); default 10. */
  readonly logStatsIntervalSec?: number;
  /** Print debug lines too (idle engines' stat lines); default: env TS_LOG_LEVEL=debug. */
  readonly debug?: boolean;
  /** Where debug lines go (default: the server's log at debug). */
  readonly debugLog?: (msg: string) => void;
  /** False with --disable-log-stats: engines build no scheduler stats and their families are no-ops (default true). */
  readonly statsEnabled?: boolean;
  /** `--chat-template FILE`'s text (read once at start-up): every generation model's chat template. */
  readonly chatTemplate?: string;
  /**
   * vLLM's switch: engines scan every logits row for NaN and `corrupted_requests` is registered
   * (default: env VLLM_COMPUTE_NANS_IN_LOGITS=1; off, nothing is scanned and the family is absent).
   */
  readonly computeNansInLogits?: boolean;
  /** `--enable-mfu-metrics`: engines estimate each step's FLOPs and bytes into the MFU counters (default false). */
  readonly enableMfuMetrics?: boolean;
}

/**
 * The engine block with the server's switches set: they win over the block, whose own spelling
 * of the same setting (`compute_nans_in_logits: false`) is dropped rather than left to conflict.
 */
function withSwitches(
  engine: Readonly<Record<string, unknown>> | undefined,
  switches: Readonly<Record<string, boolean>>,
): Readonly<Record<string, unknown>> {
  const kept = Object.entries(engine ?? {}).filter(([k]) => {
    const name = engineArgOfFlag(k)?.name;
    return name === undefined || !(name in switches);
  });
  return { ...Object.fromEntries(kept), ...switches };
}

/** The ModelKind for `handler: generate`. */
export class GenerationKind implements ModelKind {
  readonly handlers = ['generate'] as const;
  private ticker: StatLogTicker | null = null;
  private warned = false;

  constructor(private readonly opts: GenerationFrontendOptions = {}) {}

  create(config: ModelConfig, ctx: ModelKindContext, modelUrl: string, loadedAtStartup: boolean): ServedModel {
    if (!this.warned) {
      this.warned = true;
      for (const p of checkEngineMetrics(ctx.metrics).values()) ctx.log('warn', `metrics.yaml: ${p}`);
    }
    const template = this.opts.chatTemplate !== undefined ? { chatTemplate: this.opts.chatTemplate } : {};
    if (this.opts.statsEnabled === false) {
      const engine = { ...config.engine, disableLogStats: true };
      return new GenerationModel({ ...config, engine }, ctx, {
        modelUrl,
        loadedAtStartup,
        statLog: this.tickerFor(ctx),
        statsEnabled: false,
        ...template,
      });
    }
    const nans = this.opts.computeNansInLogits ?? vllmSwitchOn('VLLM_COMPUTE_NANS_IN_LOGITS');
    const mfu = this.opts.enableMfuMetrics === true;
    const engine =
      nans || mfu
        ? withSwitches(config.engine, {
            ...(nans ? { computeNansInLogits: true } : {}),
            ...(mfu ? { enableMfuMetrics: true } : {}),
          })
        : config.engine;
    return new GenerationModel(engine === config.engine ? config : { ...config, engine }, ctx, {
      modelUrl,
      loadedAtStartup,
      statLog: this.tickerFor(ctx),
      ...(nans ? { computeNansInLogits: true } : {}),
      ...template,
    });
  }

  routes(
    ctx: ModelKindContext,
    lookup: (name: string) => ServedModel | undefined,
    list: () => readonly ServedModel[],
  ): ReturnType<typeof openaiRouter> {
    const asGen = (m: ServedModel | undefined): GenerationModel | undefined =>
      m instanceof GenerationModel ? m : undefined;
    return openaiRouter({
      lookup: (name) => asGen(lookup(name)),
      list: () => list().flatMap((m) => (m instanceof GenerationModel ? [m] : [])),
      listOthers: () =>
        list().flatMap((m) =>
          m.openaiListing !== undefined
            ? [
                {
                  id: m.config.name,
                  maxModelLen: m.openaiListing.maxModelLen,
                  ...(m.openaiListing.answers !== undefined ? { answers: m.openaiListing.answers } : {}),
                },
              ]
            : [],
        ),
      ...(ctx.bodyLimits !== undefined ? { bodyLimits: ctx.bodyLimits } : {}),
      inferenceSeries: inferenceSeriesOf(ctx.series),
    });
  }

  private tickerFor(ctx: ModelKindContext): StatLogTicker {
    if (this.ticker === null) {
      const envSec = Number(process.env.TS_LOG_STATS_INTERVAL ?? '');
      const sec = this.opts.logStatsIntervalSec ?? (Number.isFinite(envSec) && envSec > 0 ? envSec : 10);
      const debug = this.opts.debug ?? (process.env.TS_LOG_LEVEL ?? '').toLowerCase() === 'debug';
      const debugLog = this.opts.debugLog ?? ((m: string): void => ctx.log('debug', m));
      this.ticker = new StatLogTicker(sec, (l) => {
        if (l.level === 'info') ctx.log('info', l.line);
        else if (debug) debugLog(l.line);
      });
    }
    return this.ticker;
  }
}
