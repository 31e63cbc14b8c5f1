/**
 * Request targets express cannot route. Its router reads the path with `url.parse`; for a
 * target that does not parse (`http://[bad`) it finds no path, runs none of our middleware and
 * answers its own HTML 404, uncounted. HTTP says a malformed target is the client's error (400),
 * so each listener answers it before express, in TorchServe's JSON shape, counted like any answer.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import { countResponse } from './count-responses.js';
import { sendError } from './errors.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** True for origin-form (`/…`), `*`, and absolute-form targets that parse as URLs. */
export function targetParses(url: string | undefined): boolean {
  if (url === undefined || url === '') return false;
  const c = url.charCodeAt(0);
  if (c === 47 /* / */) return true;
  if (url === '*') return true;
  return URL.canParse(url);
}

/** The message of the 400 (the target quoted as JSON, so control bytes stay visible). */
export function badTargetMessage(url: string | undefined): string {
  return `invalid request target ${JSON.stringify(url ?? '')}`;
}

/**
 * `app` behind the target check: an unparseable target gets a 400 naming it, counted by
 * `count` (Requests4XX) and handed to `track` (HTTP metrics) when given.
 */
export function guardTarget(
  app: Listener,
  count?: (status: number) => void,
  track?: (req: IncomingMessage, res: ServerResponse) => void,
): Listener {
  return (req, res) => {
    if (targetParses(req.url)) {
      app(req, res);
      return;
    }
    if (count !== undefined) countResponse(res, count);
    track?.(req, res);
    sendError(res, 400, badTargetMessage(req.url));
  };
}
