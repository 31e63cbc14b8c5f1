/**
 * The audio fields of a spoken chat request (`modalities`, `audio: {voice, format}`), checked
 * before any stage: a client that asked for audio never gets text only, and one whose format a
 * stream cannot carry is told so (OpenAI streams pcm16 only).
 */
import { OpenAIError } from '../http/openai-errors.js';
import { AUDIO_OPTION_FIELDS } from './allowed-fields.js';
import { refuseUnsupported } from './params.js';

/** Audio formats of chat answers. */
export type ChatAudioFormat = 'wav' | 'pcm16';

type Obj = Readonly<Record<string, unknown>>;

/** `modalities` and `audio` of a chat body, validated; null when audio is not asked for. */
export function parseAudioOptions(
  body: Obj,
  stream: boolean,
): { readonly format: ChatAudioFormat; readonly voice: string } | null {
  const mods = body.modalities ?? ['text'];
  if (!Array.isArray(mods) || mods.length === 0 || !mods.every((m) => m === 'text' || m === 'audio')) {
    throw new OpenAIError(
      400,
      `modalities must be a list of "text" and "audio", got ${JSON.stringify(mods)}`,
      'modalities',
    );
  }
  const a = body.audio as Obj | undefined | null;
  if (!mods.includes('audio')) {
    // Never dropped silently: the client asked for audio and would get text only.
    if (a !== undefined && a !== null)
      throw new OpenAIError(
        400,
        'audio is set but modalities does not include "audio": send modalities ["text", "audio"]',
        'audio',
      );
    return null;
  }
  if (!mods.includes('text'))
    throw new OpenAIError(
      400,
      'modalities ["audio"] must also include "text": the answer is a transcript with its audio, send ["text", "audio"]',
      'modalities',
    );
  if (typeof a !== 'object' || a === null || Array.isArray(a))
    throw new OpenAIError(400, 'audio {voice, format} is required when modalities includes "audio"', 'audio');
  refuseUnsupported(a, AUDIO_OPTION_FIELDS, 'audio.');
  if (typeof a.voice !== 'string' || a.voice === '')
    throw new OpenAIError(400, 'audio.voice must be a non-empty string', 'audio.voice');
  if (a.format !== 'wav' && a.format !== 'pcm16')
    throw new OpenAIError(
      400,
      `audio.format must be "wav" or "pcm16", got ${JSON.stringify(a.format)}`,
      'audio.format',
    );
  if (stream && a.format !== 'pcm16')
    throw new OpenAIError(400, 'streamed audio needs audio.format "pcm16"', 'audio.format');
  return { format: a.format, voice: a.voice };
}
