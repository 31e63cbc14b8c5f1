/**
 * Chat templates (docs/openai.md): a model's `chat_template` (tokenizer_config.json or
 * chat_template.jinja in its directory, or the operator's `--chat-template FILE`) rendered with
 * the messages, `add_generation_prompt`, `bos_token` / `eos_token` and the request's
 * `chat_template_kwargs`, as vLLM renders it. A model without one answers chat with vLLM's 400.
 * A render error is a 400 naming the problem (bounded excerpt); the render itself is bounded by
 * schema/text/chat-jinja.ts.
 */
import * as path from 'node:path';
import { excerpt, readModelText } from '../../schema/files/model-file.js';
import { ChatJinja, ChatTemplateError } from '../../schema/text/chat-jinja.js';
import { OpenAIError } from '../http/openai-errors.js';

/** One chat message after validation. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

/** What a chat request asks of the template. */
export interface ChatRequestPart {
  readonly messages: readonly ChatMessage[];
  /** vLLM's `add_generation_prompt` (default true): the template cues the assistant's turn. */
  readonly addGenerationPrompt: boolean;
  /** vLLM's `chat_template_kwargs`: extra template variables (they never replace the ones above). */
  readonly kwargs: Readonly<Record<string, unknown>>;
}

/** vLLM's answer to chat on a model whose tokenizer defines no template (transformers' message). */
export const NO_CHAT_TEMPLATE_MESSAGE =
  'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.';

/** Most characters a rendered prompt may have (a template that loops past this is refused, not run on). */
export const MAX_RENDERED_CHARS = 4 * 1024 * 1024;

/** Characters of a library message echoed in a 400. */
const MESSAGE_EXCERPT = 200;

/** A model's compiled chat template with the special tokens it is rendered with. */
export class ChatTemplate {
  private readonly jinja: ChatJinja;

  /** Compiles `source` (throws ChatTemplateError: a load error). */
  constructor(
    source: string,
    private readonly specials: { readonly bos_token?: string; readonly eos_token?: string } = {},
  ) {
    this.jinja = new ChatJinja(source);
  }

  /** The prompt text of a chat request; a render problem is an OpenAIError(400). */
  render(part: ChatRequestPart): string {
    try {
      return this.jinja.render(
        {
          ...part.kwargs,
          bos_token: this.specials.bos_token ?? '',
          eos_token: this.specials.eos_token ?? '',
          messages: part.messages.map((m) => ({ role: m.role, content: m.content })),
          add_generation_prompt: part.addGenerationPrompt,
        },
        MAX_RENDERED_CHARS,
      );
    } catch (err) {
      if (err instanceof ChatTemplateError) {
        throw new OpenAIError(400, `chat template error: ${excerpt(err.message, MESSAGE_EXCERPT)}`, 'messages');
      }
      throw err;
    }
  }
}

/** The renderer of a model with no template: every chat request gets vLLM's 400. */
export const NO_CHAT_TEMPLATE = Object.freeze({
  render(): never {
    throw new OpenAIError(400, NO_CHAT_TEMPLATE_MESSAGE);
  },
});

/** A template source compiled for a model; a template that does not parse is a load error naming it. */
export function compileChatTemplate(
  source: string | undefined,
  specials: { readonly bos_token?: string; readonly eos_token?: string },
  where: string,
): Pick<ChatTemplate, 'render'> {
  if (source === undefined) return NO_CHAT_TEMPLATE;
  try {
    return new ChatTemplate(source, specials);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Reads and compiles `--chat-template FILE` once at start-up (a regular file, bounded like a
 * model's text files); throws an Error naming the file and the problem.
 */
export async function readChatTemplateFile(file: string): Promise<string> {
  const abs = path.resolve(file);
  let source: string;
  try {
    source = await readModelText(path.dirname(abs), path.basename(abs));
  } catch (err) {
    throw new Error(`--chat-template: ${(err as Error).message}`, { cause: err });
  }
  compileChatTemplate(source, {}, `--chat-template ${file}`);
  return source;
}
