/**
 * A spoken (pipeline) request's span: `/v1/audio/speech` starts its SERVER span here (a spoken
 * chat's was started by the chat route), and its outputs, as they reach the route, make the
 * children: `thinker` (arrival → the thinker's last text) and `code2wav` (first audio chunk →
 * last), with the usage and finish reason on the server span. The stages' own queue and step
 * times stay in the pipeline's histograms: no message per request carries them here.
 */
import { performance } from 'node:perf_hooks';
import type { Response } from 'express';
import type { SpeakRequest, SpeakResult, SpeakSink } from '../pipeline/speak.js';
import { requestSpanOf, startRequestSpan, tracingOn } from '../tracing/request-span.js';

/** `sink`, with the request's spans made from what passes through it (`sink` itself when tracing is off). */
export function speechSpan(res: Response, model: string, req: SpeakRequest, sink: SpeakSink): SpeakSink {
  if (!tracingOn()) return sink;
  const span =
    requestSpanOf(res.req) ??
    startRequestSpan(res.req, res, '/v1/audio/speech', req.arrivalMs, { 'gen_ai.operation.name': 'speech' });
  if (span === null || !span.recording) return sink;
  span.set({
    'gen_ai.request.model': model,
    'gen_ai.response.model': model,
    'gen_ai.request.max_tokens': req.params.max_tokens,
    ...(req.params.temperature !== undefined ? { 'gen_ai.request.temperature': req.params.temperature } : {}),
    ...(req.params.top_p !== undefined ? { 'gen_ai.request.top_p': req.params.top_p } : {}),
  });
  let lastTextMs: number | null = null;
  let firstAudioMs: number | null = null;
  let lastAudioMs: number | null = null;
  const stages = (): void => {
    if (lastTextMs !== null) span.child('thinker', req.arrivalMs, lastTextMs);
    if (firstAudioMs !== null && lastAudioMs !== null) span.child('code2wav', firstAudioMs, lastAudioMs);
  };
  return {
    onText: (text) => {
      lastTextMs = performance.now();
      sink.onText(text);
    },
    onAudio: (pcm) => {
      const now = performance.now();
      firstAudioMs ??= now;
      lastAudioMs = now;
      sink.onAudio(pcm);
    },
    onDone: (r: SpeakResult) => {
      stages();
      span.set({
        'gen_ai.usage.input_tokens': r.promptTokens,
        'gen_ai.usage.output_tokens': r.completionTokens,
        'gen_ai.usage.prompt_tokens': r.promptTokens,
        'gen_ai.usage.completion_tokens': r.completionTokens,
        'gen_ai.response.finish_reasons': [r.finishReason],
        'tsserve.audio.frames': r.frames,
      });
      sink.onDone(r);
    },
    onError: (status, message) => {
      stages();
      sink.onError(status, message);
    },
    ...(sink.onAccepted !== undefined ? { onAccepted: () => sink.onAccepted?.() } : {}),
  };
}
