/**
 * The image bytes of a `/predictions` body, taken as TorchServe takes them: the raw body
 * (`curl -T kitten.jpg`, any `image/*`, `application/octet-stream`, or curl --data-binary's
 * form type), the `data` or `body` field of a `multipart/form-data` body (`curl -F data=@…`), or
 * base64 in JSON (a string, or `{"data": "…"}` / `{"body": "…"}`, a `data:` URL prefix allowed),
 * as TorchServe's base handler decodes a string input. Any other content type is a 415.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type { ImageDecoder } from '../image/image-decoder.js';
import type { BodyLimits } from '../models/body-limits.js';
import { sendError } from './errors.js';
import { parseJsonBody } from './json-body.js';
import type { PredictionBody } from './prediction-body.js';
import type { BodyFailure } from './read-body.js';
import { closeIfUnread, readBody } from './read-body.js';

/** Content types whose body is the image itself. */
const RAW_TYPES: ReadonlySet<string> = new Set(['application/octet-stream', 'application/x-www-form-urlencoded']);

/** The multipart fields TorchServe reads the input from, in order. */
const FIELDS = ['data', 'body'] as const;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const unsupported = (type: string): BodyFailure => ({
  status: 415,
  message: `Content-Type ${JSON.stringify(type.slice(0, 80))} is not an image body: send the image raw (image/jpeg, image/png, image/webp or application/octet-stream), as multipart/form-data field "data", or as base64 in JSON`,
});

/**
 * Reads `req`'s body under `limits`, takes the image out of it and decodes it with `decoder`;
 * calls `done` with the body the handler gets (the resized pixels and what was decoded), or
 * answers the refusal itself.
 */
export function readImageBody(
  req: IncomingMessage,
  res: ServerResponse,
  limits: BodyLimits,
  decoder: ImageDecoder,
  done: (body: PredictionBody) => void,
): void {
  readBody(req, limits, (failure, body) => {
    const refuse = (f: BodyFailure): void => {
      closeIfUnread(req, res, f.status);
      sendError(res, f.status, f.message);
    };
    if (failure !== null) return refuse(failure);
    const bytes = imageBytesOf(req.headers['content-type'], body, limits);
    if (!Buffer.isBuffer(bytes)) return refuse(bytes);
    decoder
      .decode(bytes)
      .then((r) => ('body' in r ? done({ value: r.body }) : refuse(r)))
      // Never an unhandled rejection (it would end the process): the request gets a 500.
      .catch((e: unknown) => refuse({ status: 500, message: `decoding the image failed: ${String(e).slice(0, 200)}` }));
  });
}

/** The image bytes of `body` sent with `contentType`, or the 4xx to answer. */
export function imageBytesOf(contentType: string | undefined, body: Buffer, limits: BodyLimits): Buffer | BodyFailure {
  const full = (contentType ?? '').trim();
  const type = full.split(';')[0]!.trim().toLowerCase();
  if (type === '' || type.startsWith('image/') || RAW_TYPES.has(type)) return body;
  if (type === 'multipart/form-data') return multipartField(full, body);
  if (type === 'application/json' || type.endsWith('+json')) return base64Json(body, limits);
  return unsupported(full);
}

function fromBase64(s: string, where: string): Buffer | BodyFailure {
  const text = s.replace(/^data:[^,]{0,100};base64,/, '').replace(/\s+/g, '');
  if (!BASE64.test(text) || text.length % 4 === 1)
    return { status: 400, message: `${where} is not base64 (expected the image's bytes in base64)` };
  return Buffer.from(text, 'base64');
}

function base64Json(body: Buffer, limits: BodyLimits): Buffer | BodyFailure {
  const parsed = parseJsonBody(body, limits);
  if ('status' in parsed) return parsed;
  const v = parsed.value;
  if (typeof v === 'string') return fromBase64(v, 'the JSON string');
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const f of FIELDS) if (typeof o[f] === 'string') return fromBase64(o[f], `field "${f}"`);
  }
  return {
    status: 400,
    message: 'a JSON body must be the image in base64: a string, or {"data": "<base64>"} (or "body")',
  };
}

/** The `boundary` parameter of a multipart content type. */
function boundaryOf(contentType: string): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m === null ? null : (m[1] ?? m[2] ?? null);
}

/** The first `data` (else `body`) part of a whole multipart body (RFC 7578), or why not. */
export function multipartField(contentType: string, body: Buffer): Buffer | BodyFailure {
  const boundary = boundaryOf(contentType);
  if (boundary === null) return { status: 400, message: 'multipart/form-data without a boundary parameter' };
  const delim = Buffer.from(`--${boundary}`);
  const parts = new Map<string, Buffer>();
  let at = body.indexOf(delim);
  while (at !== -1) {
    let start = at + delim.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break; // the closing `--boundary--`
    if (body[start] === 0x0d && body[start + 1] === 0x0a) start += 2;
    const next = body.indexOf(delim, start);
    if (next === -1) break;
    const headEnd = body.indexOf('\r\n\r\n', start);
    if (headEnd === -1 || headEnd > next) return { status: 400, message: 'a multipart part has no header end' };
    const head = body.subarray(start, headEnd).toString('latin1');
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]*)"/i.exec(head)?.[1];
    // The part's content ends before the CRLF that precedes the next delimiter.
    let end = next;
    if (body[end - 2] === 0x0d && body[end - 1] === 0x0a) end -= 2;
    if (name !== undefined && !parts.has(name)) parts.set(name, body.subarray(headEnd + 4, end));
    at = next;
  }
  for (const f of FIELDS) {
    const p = parts.get(f);
    if (p !== undefined) return p;
  }
  const names = [...parts.keys()].slice(0, 5).map((n) => JSON.stringify(n.slice(0, 40)));
  return {
    status: 400,
    message: `multipart/form-data has no field "data" or "body" (fields: ${names.length > 0 ? names.join(', ') : 'none'})`,
  };
}
