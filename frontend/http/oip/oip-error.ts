/** The Open Inference Protocol's error answer, on node's response (inside or outside express). */
import type { ServerResponse } from 'http';
import { sendJson } from '../errors.js';
import { capMessage } from '../../../schema/echo.js';

/** Sends `{"error": message}` with `status`, as the routes inside express answer it. */
export function sendOipError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: capMessage(message) });
}
