/**
 * The primary's side of the fronts' requests: a job, a generation or a spoken request relayed by a
 * front runs on the primary's own model (its batcher, its workers) exactly as a request the
 * primary read itself, and its answer goes back to that front. The front's arrival time
 * (epoch ms) is moved onto this process's clock, so queue times and TTFT count from when the
 * front read the request.
 */
import { performance } from 'perf_hooks';
import { errorOutcome } from '../batching/job.js';
import { EmbeddingModel } from '../embeddings/embedding-model.js';
import type { EmbeddingJobBody } from '../../schema/text/embedding-options.js';
import { GenerationModel } from '../generation/generation-model.js';
import type { ServedModel } from '../models/served-model.js';
import type { JobOutcome } from '../batching/job.js';
import type { FrontGenerate, FrontJob, FrontJobDone, FrontSpeak, FrontSpeechEvent, ToFront } from './messages.js';
import { PipelineModel } from '../pipeline/pipeline-model.js';
import { traceIds } from '../metrics/exposition/trace-ids.js';

/** What the refusals of a relayed job say (the words `/predictions` answers with). */
function refusal(name: string, admitted: 'queue_full' | 'unavailable' | 'closed'): string {
  if (admitted === 'closed') return `Model "${name}" is being unregistered`;
  const base = `Model "${name}" has no worker to serve inference request. Please use scale workers API to add workers.`;
  return admitted === 'queue_full' ? `${base} (job queue full)` : base;
}

/** Runs one front's relayed requests on the primary's models. */
export class ModelRelay {
  /** Relayed jobs not answered yet, each with whether its client went away. */
  private readonly jobs = new Map<number, boolean>();
  private readonly aborts = new Map<number, () => void>();
  private gone = false;
  /** Prompts still to come of a several-prompt request refused as a whole (they follow its first, in order). */
  private refusedFollowers = 0;
  /** Answers given in this turn of the event loop: they leave together, in one message. */
  private answers: FrontJobDone[] = [];
  private readonly flushAnswers = (): void => {
    const done = this.answers;
    this.answers = [];
    if (done.length === 0 || this.gone || this.send({ type: 'tsserve.front.dones', done })) return;
    // Something in them cannot be serialised: each alone, and one that still fails gets a 500.
    for (const d of done) {
      if (this.send(d)) continue;
      this.send({
        type: 'tsserve.front.done',
        id: d.id,
        outcome: errorOutcome(
          500,
          'InternalServerException',
          'the answer could not be sent to the front process',
          d.outcome.queueUs,
        ),
      });
    }
  };

  /** Relayed jobs not answered yet. */
  get jobsInFlight(): number {
    return this.jobs.size;
  }

  constructor(
    private readonly lookup: (name: string) => ServedModel | undefined,
    private readonly send: (m: ToFront) => boolean,
  ) {}

  job(m: FrontJob): void {
    // Exemplars are recorded here, in the primary: they look the trace id up by request id.
    traceIds.set(m.requestId, m.traceId);
    const model = this.lookup(m.model);
    const answer = (outcome: JobOutcome): void => {
      this.jobs.delete(m.id);
      if (this.gone) return;
      if (this.answers.length === 0) setImmediate(this.flushAnswers);
      this.answers.push({ type: 'tsserve.front.done', id: m.id, outcome });
    };
    this.jobs.set(m.id, false);
    const cancelled = (): boolean => this.gone || this.jobs.get(m.id) === true;
    // An input of a front's /v1/embeddings: the front tokenized it and records the route's families.
    if (model instanceof EmbeddingModel) {
      void model
        .embed(m.requestId, m.body as EmbeddingJobBody, cancelled, m.arrivalEpochMs - performance.timeOrigin)
        .then(answer);
      return;
    }
    if (model?.submit === undefined)
      return answer(errorOutcome(404, 'ResourceNotFoundException', `Model not found: ${m.model}`));
    const admitted = model.submit({
      requestId: m.requestId,
      body: m.body,
      ...(m.input !== undefined ? { input: m.input } : {}),
      ...(m.batchKey !== undefined ? { batchKey: m.batchKey } : {}),
      ...(m.inputBytes !== undefined ? { inputBytes: m.inputBytes } : {}),
      arrivalMs: m.arrivalEpochMs - performance.timeOrigin,
      cancelled,
      done: answer,
    });
    if (admitted !== 'queued')
      answer({ ...errorOutcome(503, 'ServiceUnavailableException', refusal(m.model, admitted)), refused: admitted });
  }

  generate(m: FrontGenerate): void {
    // The rest of a request refused as a whole: the front failed it on its first prompt's error
    // and cancels these; none starts.
    if (m.group !== undefined && m.group.index > 0 && this.refusedFollowers > 0) {
      this.refusedFollowers--;
      return;
    }
    traceIds.set(m.requestId, m.traceId);
    const model = this.lookup(m.model);
    const send = (ev: Omit<Extract<ToFront, { type: 'tsserve.front.gen' }>, 'type' | 'id'>): void => {
      if (!this.gone) this.send({ type: 'tsserve.front.gen', id: m.id, ...ev });
    };
    if (!(model instanceof GenerationModel))
      return send({ error: { status: 404, message: `The model \`${m.model}\` does not exist.` } });
    // Several prompts are admitted all or none, as the route does without fronts (it started
    // the first ones, then aborted them when a later one was refused).
    if (m.group !== undefined && m.group.index === 0) {
      const refused = model.admits(m.group.size);
      if (refused !== null) {
        this.refusedFollowers = m.group.size - 1;
        return send({ error: { status: refused.status, message: refused.message } });
      }
    }
    let left = m.params.n ?? 1;
    const started = model.generate(
      {
        prompt: m.prompt,
        params: m.params,
        arrivalMs: m.arrivalEpochMs - performance.timeOrigin,
        requestId: m.requestId,
      },
      {
        onTimings: (timings) => send({ timings }),
        onOutput: (output) => {
          if (output.finishReason !== undefined && --left <= 0) this.aborts.delete(m.id);
          send({ output });
        },
        onError: (status, message) => {
          this.aborts.delete(m.id);
          send({ error: { status, message } });
        },
      },
    );
    if ('status' in started) return send({ error: { status: started.status, message: started.message } });
    send({ accepted: true });
    const handle = started;
    this.aborts.set(m.id, () => handle.abort());
  }

  speak(m: FrontSpeak): void {
    const model = this.lookup(m.model);
    const send = (ev: Omit<FrontSpeechEvent, 'type' | 'id'>): void => {
      if (!this.gone) this.send({ type: 'tsserve.front.speech', id: m.id, ...ev });
    };
    if (!(model instanceof PipelineModel))
      return send({ error: { status: 404, message: `The model \`${m.model}\` does not exist.` } });
    let ended = false;
    const started = model.speak(
      {
        prompt: m.prompt,
        params: m.params,
        streamed: m.streamed,
        requestId: m.requestId,
        arrivalMs: m.arrivalEpochMs - performance.timeOrigin,
        ...(m.codes !== undefined ? { codes: m.codes } : {}),
      },
      {
        onText: (text) => send({ text }),
        onAudio: (audio) => send({ audio }),
        onDone: (done) => {
          ended = true;
          this.aborts.delete(m.id);
          send({ done });
        },
        onError: (status, message) => {
          ended = true;
          this.aborts.delete(m.id);
          send({ error: { status, message } });
        },
      },
    );
    if ('status' in started) return send({ error: { status: started.status, message: started.message } });
    // A run that failed at once (nothing to speak) has already sent its end.
    if (ended) return;
    send({ accepted: true });
    this.aborts.set(m.id, () => started.abort());
  }

  cancel(id: number): void {
    const abort = this.aborts.get(id);
    if (abort !== undefined) {
      this.aborts.delete(id);
      abort();
      return;
    }
    // Only a job still in flight is marked: a cancel that crossed its answer leaves nothing behind.
    if (this.jobs.has(id)) this.jobs.set(id, true);
  }

  /** The front exited: its queued jobs are dropped, its generations aborted. */
  frontGone(): void {
    this.gone = true;
    for (const abort of this.aborts.values()) abort();
    this.aborts.clear();
  }
}
