/** OpenAI's JSON error shape `{error: {message, type, param, code}}`, with the HTTP status. */
import type { Response } from 'express';
import { capMessage } from '../../schema/echo.js';

/** A request problem to answer with OpenAI's error shape. */
export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    param: string | null = null,
    readonly code: string | null = null,
  ) {
    // Capped once here: every refusal that echoes the request (a name, a value, a key) stays bounded.
    super(capMessage(message));
    this.param = param === null ? null : capMessage(param);
  }

  /** The request field at fault (capped like the message: it may be a key the client sent). */
  readonly param: string | null;
}

/** OpenAI's `type` for a status: every client error but 404 is the request's (408 and 415 too, not the server's). */
export function errorType(status: number): string {
  if (status === 404) return 'not_found_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  if (status === 503) return 'service_unavailable_error';
  return 'server_error';
}

/** The error body for a status and message. */
export function errorBody(
  status: number,
  message: string,
  param: string | null = null,
  code: string | null = null,
): object {
  return { error: { message: capMessage(message), type: errorType(status), param, code } };
}

/** Answers `err` as JSON (no-op when the headers are already sent). */
export function sendOpenAIError(res: Response, err: OpenAIError): void {
  if (res.headersSent) return;
  res.status(err.status).json(errorBody(err.status, err.message, err.param, err.code));
}
