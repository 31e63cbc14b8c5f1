/**
 * The adapter for `@huggingface/jinja` (the one file that imports it): a chat template compiled
 * once, rendered per request (the library's Template.render, with our own globals). A template is
 * untrusted code, so its render is bounded: `range()` yields at most MAX_RANGE items and the
 * output at most `maxChars` characters (checked after the render; the library has no time limit
 * or interrupt, and a template comes from the model's directory or the operator's
 * --chat-template, never from a request).
 */
import * as jinja from '@huggingface/jinja';

/**
 * The part of the library this adapter calls. Its published .d.ts files import each other
 * without extensions, which NodeNext resolution (the lint's type checker) cannot follow, so the
 * shape is written here once (as hf-tokenizer.ts does for @huggingface/tokenizers).
 */
interface LibJinja {
  Template: new (source: string) => { readonly parsed: unknown };
  Environment: new () => { set(name: string, value: unknown): unknown };
  Interpreter: new (env: unknown) => { run(program: unknown): { readonly value: unknown } };
}

const { Template, Environment, Interpreter } = jinja as unknown as LibJinja;

/** Most items one `range()` call of a template yields. */
export const MAX_RANGE = 10_000;

/** A template that failed to parse or render; the message names the problem (bounded by the caller). */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
}

function boundedRange(start: number, stop?: number, step = 1): number[] {
  const [a, b] = stop === undefined ? [0, start] : [start, stop];
  if (step === 0) throw new ChatTemplateError('range() step must not be zero');
  const n = Math.max(0, Math.ceil((b - a) / step));
  if (n > MAX_RANGE) throw new ChatTemplateError(`range() of ${n} items, over the bound of ${MAX_RANGE}`);
  return Array.from({ length: n }, (_, i) => a + i * step);
}

/**
 * The globals a template sees, as the library's own (`true`, `none`, `raise_exception`, …) but
 * with a bounded `range`; they win over a request's variable of the same name. The library's
 * `strftime_now` is left out (templates test `strftime_now is defined`): the output stays a
 * function of the request alone.
 */
const GLOBALS: Readonly<Record<string, unknown>> = {
  false: false,
  true: true,
  none: null,
  False: false,
  True: true,
  None: null,
  raise_exception: (message: unknown): never => {
    throw new ChatTemplateError(`raise_exception: ${String(message)}`);
  },
  range: boundedRange,
};

/** A compiled chat template. */
export class ChatJinja {
  private readonly template: { readonly parsed: unknown };

  /** Parses `source`; throws ChatTemplateError when it is not a template the library reads. */
  constructor(source: string) {
    try {
      this.template = new Template(source);
    } catch (err) {
      throw new ChatTemplateError(`the chat template does not parse: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Renders with `vars` (messages, add_generation_prompt, bos_token, …); throws ChatTemplateError. */
  render(vars: Readonly<Record<string, unknown>>, maxChars: number): string {
    let out: string;
    try {
      const env = new Environment();
      for (const [k, v] of Object.entries(GLOBALS)) env.set(k, v);
      for (const [k, v] of Object.entries(vars)) if (!(k in GLOBALS)) env.set(k, v);
      out = String(new Interpreter(env).run(this.template.parsed).value);
    } catch (err) {
      if (err instanceof ChatTemplateError) throw err;
      throw new ChatTemplateError(`the chat template failed to render: ${(err as Error).message}`, { cause: err });
    }
    if (out.length > maxChars) {
      throw new ChatTemplateError(`the chat template rendered ${out.length} characters, over the bound of ${maxChars}`);
    }
    return out;
  }
}
