/**
 * A completion's or chat's attributes on its request span: OpenTelemetry's `gen_ai` semantic
 * conventions (request model and parameters, usage, finish reasons, response id) and vLLM's own
 * names for what it records too (`gen_ai.usage.prompt_tokens` / `completion_tokens`,
 * `gen_ai.request.n`, `gen_ai.request.id`); the phases come from each prompt's timings.
 */
import type { RequestSpan } from '../tracing/request-span.js';
import type { RequestTimings } from '../generation/engine-stats.js';
import type { ChoiceCollector } from './choice-collector.js';
import type { ParsedRequest } from './params.js';
import type { ReadyPrompt } from './request-prompts.js';

/** What the route tells a request's span. */
export interface GenerationSpan {
  /** One prompt's phases (called before the output that finishes it). */
  timings(t: RequestTimings): void;
  /** The answer is complete: usage and finish reasons. */
  done(collector: ChoiceCollector): void;
  /** The engine's request id and the answer's id, once known. */
  ids(requestId: string, responseId: string): void;
}

/** The span's side of one OpenAI generation request; null when there is no span (tracing off). */
export function generationSpan(
  span: RequestSpan | null | undefined,
  p: ParsedRequest,
  prompts: readonly ReadyPrompt[],
  arrivalMs: number,
): GenerationSpan | null {
  if (span == null || !span.recording) return null;
  const params = p.params;
  span.set({
    'gen_ai.request.model': p.model,
    'gen_ai.response.model': p.model,
    'gen_ai.request.n': params.n,
    // The first prompt's max_tokens: the client's, else what the server defaulted it to.
    ...(prompts[0] !== undefined ? { 'gen_ai.request.max_tokens': prompts[0].maxTokens } : {}),
    ...(params.temperature !== undefined ? { 'gen_ai.request.temperature': params.temperature } : {}),
    ...(params.top_p !== undefined ? { 'gen_ai.request.top_p': params.top_p } : {}),
    ...(params.top_k !== undefined ? { 'gen_ai.request.top_k': params.top_k } : {}),
    ...(params.seed !== undefined ? { 'gen_ai.request.seed': params.seed } : {}),
  });
  let finished = false;
  return {
    timings: (t) => span.generated(arrivalMs, t),
    ids: (requestId, responseId) => span.set({ 'gen_ai.request.id': requestId, 'gen_ai.response.id': responseId }),
    done: (collector) => {
      if (finished) return;
      finished = true;
      const u = collector.usage();
      span.set({
        'gen_ai.usage.input_tokens': u.prompt_tokens,
        'gen_ai.usage.output_tokens': u.completion_tokens,
        'gen_ai.usage.prompt_tokens': u.prompt_tokens,
        'gen_ai.usage.completion_tokens': u.completion_tokens,
        'gen_ai.usage.num_sequences': collector.size,
        'gen_ai.response.finish_reasons': collector.choices.map((c) => c.finishReason ?? 'none'),
      });
    },
  };
}
