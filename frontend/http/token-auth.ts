/**
 * TorchServe-style token authorization: keys written to `key_file.json` at start-up, one for
 * the management API and one for the inference API, sent as `Authorization: Bearer <key>`.
 */
import { randomBytes, timingSafeEqual } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { RequestHandler } from 'express';
import { sendError } from './errors.js';
import { closeWithoutReading } from './read-body.js';

/** The keys of one server run. */
export interface TokenKeys {
  readonly management: string;
  readonly inference: string;
  /** Where they were written. */
  readonly file: string;
}

/** The key file's name (TorchServe's). */
export const KEY_FILE = 'key_file.json';

/** Creates fresh keys and writes them (mode 0600) to `<dir>/key_file.json`. */
export function writeKeyFile(dir: string): TokenKeys {
  const management = randomBytes(16).toString('hex');
  const inference = randomBytes(16).toString('hex');
  const file = path.join(dir, KEY_FILE);
  fs.mkdirSync(dir, { recursive: true });
  const doc = { management: { key: management }, inference: { key: inference } };
  fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
  return { management, inference, file };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when an `Authorization` header value is `Bearer <key>`. */
export function bearerMatches(header: string | undefined, key: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return m !== null && same(m[1], key);
}

/** TorchServe's answer to a missing or wrong key. */
export const TOKEN_FAILED = 'Token Authorization failed. Token either incorrect, expired, or not provided correctly';

/**
 * Middleware answering 401 unless `Authorization: Bearer <key>` matches; `skip` paths pass.
 * Mount it before anything that reads a body: the 401 is decided from the headers, and a
 * client without the key gets no byte of its body read (the connection closes after the 401).
 */
export function requireToken(key: string, skip: readonly string[] = []): RequestHandler {
  return (req, res, next) => {
    if (skip.includes(req.path)) return next();
    if (bearerMatches(req.headers.authorization, key)) return next();
    closeWithoutReading(req, res);
    sendError(res, 401, TOKEN_FAILED);
  };
}
