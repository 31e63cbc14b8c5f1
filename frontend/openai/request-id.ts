/**
 * The client's `X-Request-Id` on the OpenAI routes, as vLLM's server reads it
 * (`_base_request_id`): the base of the answer's `id` (`chatcmpl-<id>`, `cmpl-<id>`), echoed in
 * the answer's `X-Request-Id`, so a client or gateway can follow its own id through. Clients
 * reuse ids (retries, a fixed id per session), so the engine runs each request under the base
 * and a fresh suffix, as vLLM's engine does: two requests in flight with one id both run.
 */
import { randomUUID } from 'crypto';
import type { IncomingHttpHeaders } from 'http';
import { OpenAIError } from '../http/openai-errors.js';

/** Longest `X-Request-Id` taken: a UUID or a gateway's trace id fits, a log line stays short. */
export const MAX_REQUEST_ID_LENGTH = 128;

/**
 * The request's `X-Request-Id`, or undefined when it sent none. Throws a 400 naming the header
 * when it is empty, longer than MAX_REQUEST_ID_LENGTH or holds anything but visible ASCII
 * (`!`..`~`): a space (node joins a repeated header with `, `), a control or a non-ASCII byte
 * would make the id ambiguous in log lines and headers.
 */
export function clientRequestId(headers: IncomingHttpHeaders): string | undefined {
  const id = headers['x-request-id'];
  if (id === undefined) return undefined;
  const refuse = (why: string): OpenAIError =>
    new OpenAIError(
      400,
      `X-Request-Id must be 1 to ${MAX_REQUEST_ID_LENGTH} visible ASCII characters (! to ~); ${why}`,
    );
  // Node gives a header it does not know as one string (repeats joined); the array is set-cookie's alone.
  const value = Array.isArray(id) ? id.join(', ') : id;
  if (value === '') throw refuse('it is empty');
  if (value.length > MAX_REQUEST_ID_LENGTH) throw refuse(`it has ${value.length}`);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) throw refuse(`character ${i + 1} is U+${c.toString(16).toUpperCase().padStart(4, '0')}`);
  }
  return value;
}

/** The id an engine runs a request under whose client named it `base`: unique, so a reused id never meets itself in the engine. */
export function engineRequestId(base: string): string {
  return `${base}-${randomUUID()}`;
}
