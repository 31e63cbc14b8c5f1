/**
 * A `handler: pipeline` model: its stages (a generation model as the thinker, a vocoder stage
 * as code2wav), each a model directory of the same store run by its own replicas, and the
 * orchestrator that moves requests through them. The thinker's engines carry `stage` and
 * `replica` as automatic labels, which stand in for `engine` on every engine family.
 */
import type { PipelineStageSpec } from '../../schema/pipeline-config.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { GenerationModel } from '../generation/generation-model.js';
import type { StatLine } from '../generation/logging-stat-logger.js';
import type { StatLineSource } from '../generation/stat-log-ticker.js';
import type { ModelKindContext } from '../models/model-kinds.js';
import { RegistrationError } from '../models/model-manager.js';
import { pipelineWorkers } from '../../schema/pipeline-config.js';
import type { ModelDescription, ServedModel } from '../models/served-model.js';
import type { ModelVocab } from '../generation/model-vocab.js';
import { vocabOf } from '../generation/model-vocab.js';
import { PipelineAggregator } from './aggregator.js';
import { AudioMetrics } from './audio-metrics.js';
import { Orchestrator } from './orchestrator.js';
import type { SpeakHandle, SpeakRequest, SpeakSink } from './speak.js';
import { PipelineMetrics } from './pipeline-metrics.js';
import { TransferMetrics } from './transfer-metrics.js';
import { VocoderStage } from './vocoder-stage.js';
import { withOmniNames } from './omni-names.js';
import { StageLoad } from './stage-load.js';

/** Scheduler stats of a stage's engine: at most once a second per (stage, replica), deltas kept. */
export const STAGE_STATS_INTERVAL_MS = 1000;

/** Options beyond the model config. */
export interface PipelineModelOptions {
  readonly modelUrl: string;
  readonly loadedAtStartup: boolean;
  /** False with --disable-log-stats: every pipeline, audio, transfer and engine record is a no-op. */
  readonly statsEnabled: boolean;
  /** The periodic stat log (engine lines and the pipeline's line). */
  readonly statLog?: { add(source: StatLineSource): void; remove(source: StatLineSource): void };
  /** Where per-request DEBUG tables go; null when DEBUG is off. */
  readonly debugLog: ((line: string) => void) | null;
}

/** A stage's model config, read from the store with the pipeline's own (model-config.ts). */
function stageConfig(pipeline: ModelConfig, index: number, handler: string, replicas: number): ModelConfig {
  const model = pipeline.pipeline!.stages[index]!.model;
  const res = pipeline.pipeline!.stageConfigs?.[index];
  if (res === undefined)
    throw new RegistrationError(400, `pipeline ${pipeline.name}: stage model ${model}: its model-config was not read`);
  if (!res.ok)
    throw new RegistrationError(
      400,
      `pipeline ${pipeline.name}: stage model ${model}:\n  ${res.problems.join('\n  ')}`,
    );
  if (res.config.handler !== handler)
    throw new RegistrationError(
      400,
      `pipeline ${pipeline.name}: stage model ${model} has handler '${res.config.handler}', this stage needs '${handler}'`,
    );
  return { ...res.config, name: pipeline.name, version: pipeline.version, minWorkers: replicas, maxWorkers: replicas };
}

/** A served pipeline. */
export class PipelineModel implements ServedModel, StatLineSource {
  readonly kind = 'pipeline';
  readonly thinker: GenerationModel;
  readonly vocoder: VocoderStage;
  readonly orchestrator: Orchestrator;
  readonly sampleRate: number;
  private readonly aggregator: PipelineAggregator;
  private closed = false;

  constructor(
    readonly config: ModelConfig,
    ctx: ModelKindContext,
    private readonly opts: PipelineModelOptions,
  ) {
    const spec = config.pipeline;
    if (spec === undefined)
      throw new RegistrationError(400, `model ${config.name}: handler pipeline needs a pipeline: block`);
    const [t, v] = spec.stages as readonly [(typeof spec.stages)[0], (typeof spec.stages)[0]];
    const lm = stageConfig(config, 0, 'generate', t.replicas);
    const engine = {
      ...lm.engine,
      statsIntervalMs: lm.engine?.statsIntervalMs ?? STAGE_STATS_INTERVAL_MS,
      ...(opts.statsEnabled ? {} : { disableLogStats: true }),
    };
    const auto = new Map<number, AutoLabels>();
    const autoLabelsFor = (replica: number): AutoLabels => {
      let a = auto.get(replica);
      if (a === undefined)
        auto.set(
          replica,
          (a = Object.freeze({ ...(ctx.metrics.autoLabels ?? {}), stage: t.name, replica: String(replica) })),
        );
      return a;
    };
    this.thinker = new GenerationModel({ ...lm, engine }, ctx, {
      modelUrl: opts.modelUrl,
      loadedAtStartup: opts.loadedAtStartup,
      autoLabelsFor,
      statsEnabled: opts.statsEnabled,
      ...(opts.statLog !== undefined ? { statLog: opts.statLog } : {}),
    });
    const voc = stageConfig(config, 1, 'vocoder', v.replicas);
    const rate = voc.handlerOptions?.sampleRate;
    this.sampleRate = typeof rate === 'number' && rate > 0 ? rate : 24000;
    this.vocoder = new VocoderStage(voc, ctx);
    const m = withOmniNames(ctx.metrics);
    const on = opts.statsEnabled;
    let orchestrator: Orchestrator | null = null;
    this.aggregator = new PipelineAggregator(
      config.name,
      [t.name, v.name],
      this.sampleRate,
      opts.debugLog,
      () => orchestrator?.counts() ?? { running: 0, waiting: 0 },
    );
    orchestrator = new Orchestrator({
      modelName: config.name,
      thinker: this.thinker,
      thinkerStage: t.name,
      vocoder: this.vocoder,
      vocoderStage: v.name,
      chunkTokens: spec.chunkTokens,
      sampleRate: this.sampleRate,
      pipeline: new PipelineMetrics(m, config.name, on),
      audio: new AudioMetrics(m, config.name, v.name, on),
      transfer: new TransferMetrics(m, config.name, t.name, v.name, on),
      aggregator: this.aggregator,
      refused: ctx.series.queueFullRefusals(config.name),
      inference: ctx.series.forModel(config.name, 'default'),
      stageLoad: new StageLoad(m, config.name, on),
    });
    this.orchestrator = orchestrator;
    opts.statLog?.add(this);
  }

  /** The thinker's vocabulary and context length (prompts are tokenized and checked with it). */
  get vocab(): ModelVocab {
    return vocabOf(this.thinker);
  }

  /** Settles once the thinker's vocabulary is loaded (undefined when it is). */
  vocabLoaded(): Promise<void> | undefined {
    return this.thinker.vocabLoaded();
  }

  /** Listed by `GET /v1/models` (it answers `/v1/chat/completions`), with the thinker's context length. */
  get openaiListing(): { readonly maxModelLen: number } {
    return { maxModelLen: this.vocab.maxModelLen };
  }

  async start(): Promise<void> {
    await Promise.all([this.thinker.start(), this.vocoder.start()]);
  }

  /** Starts a spoken request, or says why it cannot start. */
  speak(req: SpeakRequest, sink: SpeakSink): SpeakHandle | { readonly status: number; readonly message: string } {
    if (this.closed)
      return { status: 503, message: `model ${this.config.name} is being unregistered or the server is stopping` };
    return this.orchestrator.start(req, sink);
  }

  /** The pipeline's INFO line (the thinker's engines print their own). */
  statLines(): StatLine[] {
    return this.aggregator.statLines();
  }

  describe(): ModelDescription {
    const c = this.config;
    const thinkerWorkers = this.thinker.describe().workers;
    const vocoderWorkers = this.vocoder.workers();
    const workers = [...thinkerWorkers, ...vocoderWorkers];
    const [lm, voc] = c.pipeline!.stages as readonly [PipelineStageSpec, PipelineStageSpec];
    // The configured replicas, not the live workers: what --max-workers counts for the other models.
    const replicas = pipelineWorkers(c.pipeline!);
    return {
      modelName: c.name,
      modelVersion: c.version,
      modelUrl: this.opts.modelUrl,
      handler: c.handler,
      kind: this.kind,
      minWorkers: replicas,
      maxWorkers: replicas,
      batchSize: c.batchSize,
      maxBatchDelay: c.maxBatchDelayMs,
      responseTimeout: c.responseTimeoutSec,
      loadedAtStartup: this.opts.loadedAtStartup,
      workers,
      // A spoken request needs room on both stages; code2wav's replicas take --job-queue-size each.
      jobQueueStatus: {
        remainingCapacity: Math.min(
          this.thinker.remainingCapacity(),
          this.vocoder.replicas().reduce((n, i) => n + Math.max(0, this.thinker.capacity - this.vocoder.load(i)), 0),
        ),
        pendingRequests: this.orchestrator.inFlight,
      },
      stages: [
        {
          stage: lm.name,
          model: lm.model,
          replicas: lm.replicas,
          workers: thinkerWorkers.map((w, i) => ({ ...w, replica: i })),
        },
        {
          stage: voc.name,
          model: voc.model,
          replicas: voc.replicas,
          workers: vocoderWorkers.map((w) => ({ ...w, replica: this.vocoder.replicaIndexOf(w.id) ?? null })),
        },
      ],
    };
  }

  /** Replicas come from the stages' counts in model-config.yaml; scaling a pipeline is not supported. */
  get notScalable(): string {
    return `model ${this.config.name} is a pipeline: its stages' replicas are set in its model-config.yaml`;
  }

  scale(): Promise<void> {
    return Promise.reject(new RegistrationError(400, this.notScalable));
  }

  drain(): Promise<void> {
    return this.orchestrator.whenIdle();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.opts.statLog?.remove(this);
    await Promise.all([this.thinker.stop(), this.vocoder.stop()]);
  }
}
