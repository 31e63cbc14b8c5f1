/**
 * Chat templates rendered with @huggingface/jinja: three fixtures (ChatML, Llama 3, a template
 * with a system-message branch) render exactly the expected strings; a model without a template, a render error and a runaway template each get their exact 400.
 * The expected strings are what Python Jinja2 3.1 renders with transformers' settings (sandboxed,
 * trim_blocks, lstrip_blocks), checked by hand when the fixtures were written.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { ChatMessage, ChatRequestPart } from '../../../frontend/generation/chat-template.js';
import {
  ChatTemplate,
  MAX_RENDERED_CHARS,
  NO_CHAT_TEMPLATE,
  NO_CHAT_TEMPLATE_MESSAGE,
  compileChatTemplate,
} from '../../../frontend/generation/chat-template.js';
import { OpenAIError } from '../../../frontend/http/openai-errors.js';
import { MAX_RANGE } from '../../../schema/text/chat-jinja.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'chat-templates');
const SPECIALS = { bos_token: '<s>', eos_token: '</s>' };

function fixture(name: string): ChatTemplate {
  return new ChatTemplate(fs.readFileSync(path.join(FIXTURES, `${name}.jinja`), 'utf8'), SPECIALS);
}

const CONVERSATION: readonly ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: '  Hi there \n' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Bye' },
];

function part(
  messages: readonly ChatMessage[],
  addGenerationPrompt = true,
  kwargs: Record<string, unknown> = {},
): ChatRequestPart {
  return { messages, addGenerationPrompt, kwargs };
}

/** The status and message of the OpenAIError `f` throws. */
function refusal(f: () => unknown): { status: number; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof OpenAIError) return { status: e.status, message: e.message };
    throw e;
  }
  throw new Error('expected an OpenAIError');
}

describe('ChatTemplate', () => {
  it('should render ChatML with and without the generation prompt', () => {
    const t = fixture('chatml');
    expect(t.render(part(CONVERSATION))).to.equal(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n  Hi there \n<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(t.render(part(CONVERSATION.slice(3), false))).to.equal('<|im_start|>user\nBye<|im_end|>\n');
  });

  it('should render the Llama 3 template: bos_token first, contents trimmed, the assistant header cued', () => {
    const t = fixture('llama3');
    expect(t.render(part(CONVERSATION))).to.equal(
      '<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(t.render(part(CONVERSATION.slice(3), false))).to.equal(
      '<s><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>',
    );
  });

  it('should take the system message out of the loop, else the default or chat_template_kwargs default_system', () => {
    const t = fixture('system-branch');
    expect(t.render(part(CONVERSATION))).to.equal(
      '<s>[SYS] Be brief. [/SYS]\n[INST]   Hi there \n [/INST] Hello.</s>\n[INST] Bye [/INST]',
    );
    expect(t.render(part(CONVERSATION.slice(3)))).to.equal(
      '<s>[SYS] You are a helpful assistant. [/SYS]\n[INST] Bye [/INST]',
    );
    expect(t.render(part(CONVERSATION.slice(3), true, { default_system: 'Custom.' }))).to.equal(
      '<s>[SYS] Custom. [/SYS]\n[INST] Bye [/INST]',
    );
  });

  it("should answer a template's raise_exception with a 400 naming it", () => {
    const t = fixture('system-branch');
    expect(
      refusal(() =>
        t.render(
          part([
            { role: 'system', content: 'a' },
            { role: 'system', content: 'b' },
          ]),
        ),
      ),
    ).to.deep.equal({
      status: 400,
      message:
        'chat template error: "raise_exception: Only user and assistant roles are supported after the system message, got system"',
    });
  });

  it("should keep the request's own variables: chat_template_kwargs cannot replace messages, the specials or the globals", () => {
    const t = new ChatTemplate(
      '{{ messages | length }} {{ bos_token }} {{ add_generation_prompt }} {{ range(2) | length }}',
      SPECIALS,
    );
    expect(
      t.render(
        part(CONVERSATION.slice(3), true, { messages: [], bos_token: 'X', add_generation_prompt: false, range: 'r' }),
      ),
    ).to.equal('1 <s> true 2');
  });

  it("should answer chat on a model without a template with vLLM's 400", () => {
    expect(refusal(() => NO_CHAT_TEMPLATE.render())).to.deep.equal({ status: 400, message: NO_CHAT_TEMPLATE_MESSAGE });
    expect(NO_CHAT_TEMPLATE_MESSAGE).to.equal(
      'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.',
    );
    expect(compileChatTemplate(undefined, {}, 'm')).to.equal(NO_CHAT_TEMPLATE);
  });

  it('should refuse a range() past its bound and an output past its bound, each with a 400 naming the bound', () => {
    const loop = new ChatTemplate(`{% for i in range(${MAX_RANGE + 1}) %}x{% endfor %}`);
    expect(refusal(() => loop.render(part(CONVERSATION)))).to.deep.equal({
      status: 400,
      message: `chat template error: "range() of ${MAX_RANGE + 1} items, over the bound of ${MAX_RANGE}"`,
    });
    const big = new ChatTemplate(`{% for i in range(${MAX_RANGE}) %}{{ messages[0]['content'] }}{% endfor %}`);
    const content = 'y'.repeat(Math.ceil(MAX_RENDERED_CHARS / MAX_RANGE) + 1);
    const n = content.length * MAX_RANGE;
    expect(refusal(() => big.render(part([{ role: 'user', content }])))).to.deep.equal({
      status: 400,
      message: `chat template error: "the chat template rendered ${n} characters, over the bound of ${MAX_RENDERED_CHARS}"`,
    });
  });

  it('should refuse a template that does not parse at load, naming where it came from', () => {
    expect(() => compileChatTemplate('{% for m in messages %}', {}, 'tiny: the chat template')).to.throw(
      /^tiny: the chat template: the chat template does not parse: /,
    );
  });
});
