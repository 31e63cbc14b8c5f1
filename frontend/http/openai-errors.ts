/** OpenAI's JSON error shape `{error: {message, type, param, code}}`, with the HTTP status. */
import type { Response } from 'express';

/** A request problem to answer with OpenAI's error shape. */
export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
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
  return { error: { message, type: errorType(status), param, code } };
}

/** Answers `err` as JSON (no-op when the headers are already sent). */
export function sendOpenAIError(res: Response, err: OpenAIError): void {
  if (res.headersSent) return;
  res.status(err.status).json(errorBody(err.status, err.message, err.param, err.code));
}
