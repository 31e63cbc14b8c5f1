/**
 * A streamed (`stream: true`) answer of the OpenAI routes: server-sent events in OpenAI's chunk
 * format, a chat's role chunk first, usage when asked, the timings as a trailer, `data: [DONE]`
 * at the end.
 */
import type { Response } from 'express';
import type { GenRequestOutput } from '../../schema/engine-ipc.js';
import { errorBody } from '../http/openai-errors.js';
import type { Kind, RenderContext } from './choice-body.js';
import { logprobsBody } from './choice-body.js';
import type { Choice, ChoiceCollector } from './choice-collector.js';
import { endOffset } from './logprobs-format.js';

/** Server-sent events in OpenAI's chunk format; `data: [DONE]` ends the stream. */
export class SseAnswer {
  started = false;
  private readonly roleSent = new Set<number>();
  /** Per choice: where its next logprobs' text_offset starts (completions). */
  private readonly offsets = new Map<number, number>();
  private readonly object: string;
  private readonly kind: Kind;
  private readonly model: string;

  constructor(
    private readonly res: Response,
    private readonly ctx: RenderContext,
    private readonly created: number,
    private readonly collector: ChoiceCollector,
  ) {
    this.kind = ctx.kind;
    this.model = ctx.p.model;
    this.object = ctx.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  }

  start(): void {
    this.started = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache');
    // The timings are known only at the end: announced here, sent as a trailer by finish(). An
    // HTTP/1.0 answer has no chunked encoding, so no trailer (Node throws on a Trailer header
    // there, and the 500 finalhandler then tried to send threw again, uncaught: the server exited).
    // No Connection header: Node keeps the connection alive unless the client sent
    // `Connection: close` (a forced keep-alive held such a client's socket 65 s after [DONE]).
    if (this.chunked) this.res.setHeader('Trailer', 'Server-Timing');
    this.res.flushHeaders();
  }

  /** True when the answer is chunked (HTTP/1.1 and later), the only encoding trailers ride on. */
  private get chunked(): boolean {
    const { httpVersionMajor: major, httpVersionMinor: minor } = this.res.req;
    return major > 1 || (major === 1 && minor >= 1);
  }

  /** One output of choice `index` (global: prompt × n + sequence index). */
  output(id: string, o: GenRequestOutput, c: Choice, index: number): void {
    const finish = o.finishReason ?? null;
    const entries = o.logprobs ?? [];
    if (o.text === '' && finish === null && entries.length === 0) return;
    const offset = this.offsets.get(index) ?? 0;
    const logprobs = logprobsBody(this.ctx, entries, offset);
    if (logprobs !== null && this.kind === 'completion')
      this.offsets.set(index, endOffset(entries, this.ctx.vocab, offset));
    const continuous = this.ctx.p.continuousUsage && this.ctx.p.includeUsage;
    const usage = continuous ? { usage: this.collector.choiceUsage(c) } : {};
    if (this.kind === 'chat') {
      if (!this.roleSent.has(index)) {
        this.roleSent.add(index);
        // The role chunk carries no token: vLLM's says completion_tokens 0 (it was this output's count).
        const roleUsage = continuous ? { usage: this.collector.choiceUsage(c, 0) } : {};
        this.send({
          id,
          object: this.object,
          created: this.created,
          model: this.model,
          choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
          ...roleUsage,
        });
      }
      const delta = o.text === '' ? {} : { content: o.text };
      this.send({
        id,
        object: this.object,
        created: this.created,
        model: this.model,
        choices: [
          { index, delta, logprobs, finish_reason: finish, stop_reason: finish === null ? null : c.stopReason },
        ],
        ...usage,
      });
      return;
    }
    let text = o.text;
    // echo: the prompt's text leads the choice's first chunk.
    if (this.ctx.p.echo && !this.roleSent.has(index)) {
      this.roleSent.add(index);
      text = this.ctx.prompts[c.prompt]!.text + text;
    }
    this.send({
      id,
      object: this.object,
      created: this.created,
      model: this.model,
      choices: [{ index, text, logprobs, finish_reason: finish, stop_reason: finish === null ? null : c.stopReason }],
      ...usage,
    });
  }

  finish(id: string, timing?: string): void {
    if (this.ctx.p.includeUsage)
      this.send({
        id,
        object: this.object,
        created: this.created,
        model: this.model,
        choices: [],
        usage: this.collector.usage(),
      });
    if (timing !== undefined && this.chunked) this.res.addTrailers({ 'Server-Timing': timing });
    this.res.end('data: [DONE]\n\n');
  }

  error(status: number, message: string): void {
    this.send(errorBody(status, message));
    this.res.end('data: [DONE]\n\n');
  }

  private send(obj: object): void {
    this.res.write(`data: ${JSON.stringify(obj)}\n\n`);
  }
}
