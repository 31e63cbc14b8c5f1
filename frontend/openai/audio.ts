/**
 * Spoken answers of pipeline models in OpenAI's shapes: `/v1/chat/completions` with
 * `modalities: ["text", "audio"]` and `audio: {voice, format: "wav" | "pcm16"}` answers
 * `message.audio.{id, data, transcript, expires_at}` (base64 audio), or with `stream: true`
 * `delta.audio` chunks (`pcm16` only, as OpenAI requires); `POST /v1/audio/speech` speaks its
 * `input` (a WAV or raw PCM body). The request is offered to this module through a chat hook,
 * so the text path in router.ts is untouched for every other model.
 */
import { performance } from 'node:perf_hooks';
import { routeTable } from '../http/route-table.js';
import type { Request, Response, Router } from 'express';
import type { BodyLimits } from '../models/body-limits.js';
import { jsonBody } from '../http/json-body.js';
import type { SpeakHandle, SpeakRequest, SpeakResult, SpeakSink } from '../pipeline/speak.js';
import type { ChatHook } from './chat-hooks.js';
import { parseAudioOptions } from './audio-options.js';
import type { ChatAudioFormat } from './audio-options.js';
import { errorBody, OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { SPEECH_FIELDS, SPOKEN_CHAT_FIELDS } from './allowed-fields.js';
import type { ModelVocab } from '../generation/model-vocab.js';
import { parseChatRequest, refuseUnsupported } from './params.js';
import { readyPrompts } from './request-prompts.js';
import { whenVocabReady } from '../generation/load-vocab.js';
import { clientRequestId } from './request-id.js';
import { wavFile } from './wav.js';
import { echoName } from '../../schema/echo.js';
import { speechSpan } from './speech-span.js';
import { requestSpanOf, tracingOn } from '../tracing/request-span.js';

/** A model that speaks (a pipeline). */
export interface SpeakingModel {
  readonly config: { readonly name: string };
  readonly sampleRate: number;
  /** The thinker's vocabulary and context length: prompts are tokenized and checked with it. */
  readonly vocab: ModelVocab;
  /** Settles once that vocabulary is loaded (undefined when it is; frontend/generation/load-vocab.ts). */
  vocabLoaded?(): Promise<void> | undefined;
  speak(req: SpeakRequest, sink: SpeakSink): SpeakHandle | { readonly status: number; readonly message: string };
}

/** Seconds an answer's audio id is said to stay valid (`expires_at`); nothing is stored server-side. */
export const AUDIO_EXPIRY_SEC = 3600;

type Obj = Readonly<Record<string, unknown>>;

/** The chat hook: takes requests naming a model `lookup` finds. */
export function chatAudioHook(lookup: (name: string) => SpeakingModel | undefined): ChatHook {
  return (req, res, arrivalMs) => {
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Obj;
    const model = typeof body.model === 'string' ? lookup(body.model) : undefined;
    if (model === undefined) return false;
    whenVocabReady(model, res, () => {
      try {
        // The router checked and echoed it already; the answer's ids take it as a generation answer's do.
        const clientId = clientRequestId(req.headers);
        const p = parseChatRequest(body, SPOKEN_CHAT_FIELDS);
        if (p.params.n !== 1) throw new OpenAIError(400, 'n must be 1 for a spoken answer', 'n');
        // The pipeline returns no token logprobs and counts usage once, at the end: refused, not ignored.
        if (p.params.logprobs !== undefined)
          throw new OpenAIError(
            400,
            `logprobs is not available from ${model.config.name}: a pipeline model returns no token logprobs`,
            'logprobs',
          );
        if (p.continuousUsage)
          throw new OpenAIError(
            400,
            `stream_options.continuous_usage_stats is not available from ${model.config.name}: its usage is sent once, with include_usage`,
            'stream_options.continuous_usage_stats',
          );
        const [ready] = readyPrompts(p, model.vocab);
        const audio = parseAudioOptions(body, p.stream);
        const speak: SpeakRequest = {
          prompt: ready!.ids,
          params: { ...p.params, max_tokens: ready!.maxTokens },
          arrivalMs,
          streamed: p.stream,
        };
        if (p.stream) streamChat(model, speak, audio !== null, p.includeUsage, res, clientId);
        else answerChat(model, speak, audio?.format ?? null, res, clientId);
      } catch (e) {
        if (!(e instanceof OpenAIError)) throw e;
        sendOpenAIError(res, e);
      }
    });
    return true;
  };
}

/** OpenAI's usage with vLLM's prompt_tokens_details, as a generation model's answer carries it. */
function usageOf(r: SpeakResult): object {
  return {
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.promptTokens + r.completionTokens,
    prompt_tokens_details: { cached_tokens: r.cachedTokens },
  };
}

/**
 * Starts the request; answers the refusal and returns null when it cannot start. Aborts on client
 * close. The answer's X-Request-Id is the client's own (`clientId`, echoed as vLLM's server does)
 * or else the pipeline's request id; the pipeline runs it under its own, unique id either way.
 */
function start(
  model: SpeakingModel,
  req: SpeakRequest,
  sink: SpeakSink,
  res: Response,
  isDone: () => boolean,
  clientId: string | undefined,
): SpeakHandle | null {
  if (clientId !== undefined) res.setHeader('x-request-id', clientId);
  const h = model.speak(req, speechSpan(res, model.config.name, req, sink));
  if ('status' in h) {
    sendOpenAIError(res, new OpenAIError(h.status, h.message));
    return null;
  }
  if (clientId === undefined) res.setHeader('x-request-id', h.requestId);
  // The pipeline's id on its span, as the other doors put theirs (a completion's engine id).
  if (tracingOn()) requestSpanOf(res.req)?.set({ 'gen_ai.request.id': h.requestId });
  res.on('close', () => {
    if (!isDone()) h.abort();
  });
  return h;
}

function answerChat(
  model: SpeakingModel,
  req: SpeakRequest,
  format: ChatAudioFormat | null,
  res: Response,
  clientId: string | undefined,
): void {
  const chunks: Uint8Array[] = [];
  let done = false;
  let id = '';
  const created = Math.floor(Date.now() / 1000);
  const h = start(
    model,
    req,
    {
      onText: () => undefined,
      onAudio: (pcm) => {
        if (format !== null) chunks.push(pcm);
      },
      onDone: (r) => {
        done = true;
        const pcm = Buffer.concat(chunks);
        const message =
          format === null
            ? { role: 'assistant', content: r.transcript, refusal: null }
            : {
                role: 'assistant',
                content: null,
                refusal: null,
                audio: {
                  id: `audio_${id}`,
                  data: (format === 'wav' ? wavFile(pcm, model.sampleRate) : pcm).toString('base64'),
                  transcript: r.transcript,
                  expires_at: created + AUDIO_EXPIRY_SEC,
                },
              };
        res.json({
          id: `chatcmpl-${id}`,
          object: 'chat.completion',
          created,
          model: model.config.name,
          choices: [{ index: 0, message, logprobs: null, finish_reason: r.finishReason, stop_reason: r.stopReason }],
          usage: usageOf(r),
        });
      },
      onError: (status, message) => {
        done = true;
        if (!res.headersSent) res.status(status).json(errorBody(status, message));
      },
    },
    res,
    () => done,
    clientId,
  );
  id = clientId ?? h?.requestId ?? '';
}

function streamChat(
  model: SpeakingModel,
  req: SpeakRequest,
  withAudio: boolean,
  includeUsage: boolean,
  res: Response,
  clientId: string | undefined,
): void {
  let done = false;
  let begun = false;
  let id = '';
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: object, finish: string | null = null, stopReason: string | number | null = null): void => {
    res.write(
      `data: ${JSON.stringify({ id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created, model: model.config.name, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, stop_reason: stopReason }] })}\n\n`,
    );
  };
  // The 200 and the role chunk: at once, or, for a request a front relays, once the primary
  // admitted it, so a refusal (a full stage) is answered with its own status.
  const begin = (): void => {
    if (begun || done) return;
    begun = true;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.flushHeaders();
    send({ role: 'assistant', content: '' });
  };
  const h = start(
    model,
    req,
    {
      onAccepted: begin,
      onText: (text) => {
        begin();
        send(withAudio ? { audio: { id: `audio_${id}`, transcript: text } } : { content: text });
      },
      onAudio: (pcm) => {
        begin();
        if (withAudio)
          send({
            audio: {
              id: `audio_${id}`,
              data: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64'),
            },
          });
      },
      onDone: (r) => {
        begin();
        done = true;
        send(
          withAudio ? { audio: { id: `audio_${id}`, expires_at: created + AUDIO_EXPIRY_SEC } } : {},
          r.finishReason,
          r.stopReason,
        );
        // stream_options.include_usage: OpenAI's last chunk, no choices and the request's usage.
        if (includeUsage)
          res.write(
            `data: ${JSON.stringify({ id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created, model: model.config.name, choices: [], usage: usageOf(r) })}\n\n`,
          );
        res.end('data: [DONE]\n\n');
      },
      onError: (status, message) => {
        done = true;
        if (!begun) {
          if (!res.headersSent) res.status(status).json(errorBody(status, message));
          return;
        }
        res.write(`data: ${JSON.stringify(errorBody(status, message))}\n\n`);
        res.end('data: [DONE]\n\n');
      },
    },
    res,
    () => done,
    clientId,
  );
  if (h === null) return;
  id = clientId ?? h.requestId;
  if (!h.pending) begin();
}

/** Options of the speech route. */
export interface SpeechRouteOptions {
  readonly lookup: (name: string) => SpeakingModel | undefined;
  readonly bodyLimits?: BodyLimits;
}

/** Longest `input` of `/v1/audio/speech`, as OpenAI's. */
export const MAX_SPEECH_INPUT = 4096;

/**
 * The speech `input`, checked: a string of 1 to MAX_SPEECH_INPUT characters, counted as code
 * points (as OpenAI counts them), so 4096 emoji, 8192 UTF-16 units, are taken. Throws OpenAIError(400).
 */
export function speechInput(input: unknown): string {
  if (typeof input === 'string' && input !== '') {
    if (input.length <= MAX_SPEECH_INPUT) return input;
    let chars = 0;
    for (const _c of input) if (++chars > MAX_SPEECH_INPUT) break;
    if (chars <= MAX_SPEECH_INPUT) return input;
  }
  throw new OpenAIError(400, `input must be a string of 1 to ${MAX_SPEECH_INPUT} characters`, 'input');
}

/** `POST /v1/audio/speech`: the input's UTF-8 bytes are the codec tokens; `response_format` wav (default) or pcm. */
export function speechRouter(opts: SpeechRouteOptions): Router {
  const r = routeTable();
  const stamp = (req: Request, _res: Response, next: () => void): void => {
    (req as Request & { arrivalMs?: number }).arrivalMs = performance.now();
    next();
  };
  const json = jsonBody(opts.bodyLimits, (res, status, message) =>
    sendOpenAIError(res, new OpenAIError(status, message)),
  );
  r.post('/v1/audio/speech', stamp, json, (req, res) => {
    const arrivalMs = (req as Request & { arrivalMs?: number }).arrivalMs ?? performance.now();
    const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Obj;
    try {
      const clientId = clientRequestId(req.headers);
      if (clientId !== undefined) res.setHeader('x-request-id', clientId);
      if (typeof body.model !== 'string') throw new OpenAIError(400, 'model is required', 'model');
      refuseUnsupported(body, SPEECH_FIELDS);
      const model = opts.lookup(body.model);
      if (model === undefined)
        throw new OpenAIError(
          404,
          `The model \`${echoName(body.model)}\` does not exist or does not speak.`,
          'model',
          'model_not_found',
        );
      const input = speechInput(body.input);
      if (typeof body.voice !== 'string' || body.voice === '')
        throw new OpenAIError(400, 'voice must be a non-empty string', 'voice');
      const format = body.response_format ?? 'wav';
      if (format !== 'wav' && format !== 'pcm')
        throw new OpenAIError(
          400,
          `response_format must be "wav" or "pcm", got ${JSON.stringify(format)}`,
          'response_format',
        );
      const codes = [...Buffer.from(input, 'utf8')];
      const chunks: Uint8Array[] = [];
      let done = false;
      start(
        model,
        { prompt: '', params: { max_tokens: 1 }, arrivalMs, streamed: false, codes },
        {
          onText: () => undefined,
          onAudio: (pcm) => chunks.push(pcm),
          onDone: () => {
            done = true;
            const pcm = Buffer.concat(chunks);
            res.setHeader('Content-Type', format === 'wav' ? 'audio/wav' : 'audio/pcm');
            res.end(format === 'wav' ? wavFile(pcm, model.sampleRate) : pcm);
          },
          onError: (status, message) => {
            done = true;
            if (!res.headersSent) res.status(status).json(errorBody(status, message));
          },
        },
        res,
        () => done,
        clientId,
      );
    } catch (e) {
      if (!(e instanceof OpenAIError)) throw e;
      sendOpenAIError(res, e);
    }
  });
  return r.router;
}
