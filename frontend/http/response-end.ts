/**
 * The end of a response, told once to every part that watches it: the access log, the
 * response count (Requests2XX…), the HTTP metrics and a prediction's client-gone flag each
 * used to add their own `once('finish')` and `once('close')` listeners, seven per prediction,
 * each a wrapper to allocate and a listener array to splice on every request. Now a response
 * has one listener for each event, whoever watches it.
 */
import type { ServerResponse } from 'http';

/**
 * Called once per response: with `true` on its 'finish' (the whole answer was handed to the
 * socket), or with `false` on a 'close' that came first (the client went away, or the answer
 * was never finished). A watcher reads `res.headersSent` or `res.writableFinished` itself.
 */
export type ResponseEnd = (finished: boolean) => void;

const WATCHERS = Symbol('tsserve.responseEnd');

type Watched = ServerResponse & { [WATCHERS]?: ResponseEnd[] };

/** Calls `fn` at the end of `res` (see `ResponseEnd`), after the watchers added before it. */
export function onResponseEnd(res: ServerResponse, fn: ResponseEnd): void {
  const w = res as Watched;
  const found = w[WATCHERS];
  if (found !== undefined) {
    found.push(fn);
    return;
  }
  const watchers: ResponseEnd[] = [fn];
  w[WATCHERS] = watchers;
  let ended = false;
  const end = (finished: boolean): void => {
    if (ended) return;
    ended = true;
    for (let i = 0; i < watchers.length; i++) (watchers[i] as ResponseEnd)(finished);
  };
  // `on`, not `once`: `ended` already makes each fire at most once, without once's wrappers.
  res.on('finish', () => end(true));
  res.on('close', () => end(false));
}
