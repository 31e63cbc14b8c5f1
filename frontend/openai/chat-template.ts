/**
 * The chat template (documented in docs/openai.md): each message becomes `<role>: <content>\n`
 * in order, then `assistant:` cues the model's turn. The tiny demo model has no trained
 * template, so the simplest unambiguous one is used; content parts of type `text` are joined with a newline (vLLM's join).
 */

/** One chat message after validation. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

/** Renders messages into the prompt the engine completes. */
export function applyChatTemplate(messages: readonly ChatMessage[]): string {
  let out = '';
  for (const m of messages) out += `${m.role}: ${m.content}\n`;
  return `${out}assistant:`;
}
