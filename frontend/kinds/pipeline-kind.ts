/**
 * The pipeline frontend as a model kind: `handler: pipeline` models become PipelineModels; their
 * spoken answers are offered `/v1/chat/completions` requests through the chat hook, and
 * `POST /v1/audio/speech` mounts on the inference listener. `--disable-log-stats` reaches
 * every pipeline from here (decided once, at construction).
 */
import type { Router } from 'express';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { StatLogTicker } from '../generation/stat-log-ticker.js';
import { chatAudioHook, speechRouter } from '../openai/audio.js';
import { registerChatHook } from '../openai/chat-hooks.js';
import type { ModelKind, ModelKindContext } from '../models/model-kinds.js';
import { RegistrationError } from '../models/model-manager.js';
import type { ServedModel } from '../models/served-model.js';
import { PipelineModel } from '../pipeline/pipeline-model.js';

/** Options of the pipeline frontend. */
export interface PipelineFrontendOptions {
  /** False with --disable-log-stats (default true). */
  readonly statsEnabled?: boolean;
  /** Seconds between the pipelines' INFO lines (`--log-stats-interval`); default 10. */
  readonly logStatsIntervalSec?: number;
  /** Per-request DEBUG tables and idle lines go here; absent: DEBUG is off. */
  readonly debugLog?: (msg: string) => void;
}

/** The ModelKind for `handler: pipeline`. */
export class PipelineKind implements ModelKind {
  readonly handlers = ['pipeline'] as const;
  private ticker: StatLogTicker | null = null;

  constructor(private readonly opts: PipelineFrontendOptions = {}) {}

  create(config: ModelConfig, ctx: ModelKindContext, modelUrl: string, loadedAtStartup: boolean): ServedModel {
    const debug = this.opts.debugLog ?? null;
    this.ticker ??= new StatLogTicker(this.opts.logStatsIntervalSec ?? 10, (l) => {
      if (l.level === 'info') ctx.log('info', l.line);
      else debug?.(l.line);
    });
    return new PipelineModel(config, ctx, {
      modelUrl,
      loadedAtStartup,
      statsEnabled: this.opts.statsEnabled ?? true,
      statLog: this.ticker,
      debugLog: debug,
    });
  }

  routes(ctx: ModelKindContext, lookup: (name: string) => ServedModel | undefined): Router {
    const asPipeline = (name: string): PipelineModel | undefined => {
      const m = lookup(name);
      return m instanceof PipelineModel ? m : undefined;
    };
    registerChatHook(chatAudioHook(asPipeline));
    return speechRouter({
      lookup: asPipeline,
      ...(ctx.bodyLimits !== undefined ? { bodyLimits: ctx.bodyLimits } : {}),
    });
  }
}

/** `handler: vocoder` models serve only as a pipeline's stage: registering one alone is refused (with `all`, skipped with a note). */
export const VOCODER_ALONE: ModelKind = {
  handlers: ['vocoder'],
  create(config) {
    throw new RegistrationError(
      400,
      `model ${config.name} has handler vocoder: it serves as the code2wav stage of a pipeline model (handler pipeline), not alone`,
      true,
    );
  },
};
