/**
 * How a handler marks a request as failed without importing anything from tsserve: an Error
 * carrying an HTTP `status`. Returned in a request's output slot it fails that request only;
 * thrown, it fails the whole batch. An Error without a status means a handler bug (500).
 */
import { types } from 'util';

/** An Error with the HTTP status the request should be answered with. */
export interface StatusError extends Error {
  readonly status: number;
}

/** Builds a request error (`context.requestError`); a status outside 400–599 becomes 400. */
export function makeRequestError(message: string, status = 400): StatusError {
  const err = new Error(String(message)) as Error & { status: number };
  err.status = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 400;
  return err;
}

/** True for any Error value, even one built in another realm (vm contexts, other modules). */
export function isError(x: unknown): x is Error {
  return types.isNativeError(x) || x instanceof Error;
}

/** The HTTP status for an error a handler returned or threw: its `status` if valid, else 500. */
export function statusOf(err: unknown): number {
  const s = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
  return typeof s === 'number' && Number.isInteger(s) && s >= 400 && s <= 599 ? s : 500;
}

/** The message to answer with: the Error's message, or its string form. */
export function messageOf(err: unknown): string {
  if (isError(err)) return err.message || err.name;
  return String(err);
}
