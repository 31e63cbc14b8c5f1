/**
 * The methods each path of an app takes, read from the routes that serve it, and the 405 with
 * `Allow` that a path answers to any other method (TorchServe's, not a 404 saying the path does
 * not exist). Read from express's router stack rather than kept in a table beside the routers:
 * a second list drifted, and a route missing from it answered a wrong method with 404.
 */
import type { Express, Request, Response, Router } from 'express';

/** A route served outside express (on node's request, before the app): its path as express writes it, and its methods. */
export interface OutsideRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

/** The `Allow` value of every routed path (`'GET, HEAD'`), in the order the routes were added. */
export type AllowedMethods = ReadonlyMap<string, string>;

/** The order of methods in an `Allow` value; any other method follows, alphabetically. */
const ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** What is read of a router's layer (router 2's `stack`: `route`, or a nested router's `handle.stack`). */
interface LayerView {
  readonly route?: { readonly path: unknown; readonly methods: Readonly<Record<string, boolean | undefined>> };
  readonly handle?: unknown;
  /** True when mounted with `use` at `/` (a nested router's paths are then its routes' own). */
  readonly slash?: boolean;
  readonly rawPath?: unknown;
}

/**
 * The `Allow` value of every path the routers' routes (nested routers mounted at `/` included)
 * and `outside` serve. A GET route takes HEAD too, as express answers it. Throws on what it
 * cannot read exactly: a router mounted below `/` or a route path that is not a string.
 */
export function allowedMethods(routers: readonly Router[], outside: readonly OutsideRoute[] = []): AllowedMethods {
  const byPath = new Map<string, Set<string>>();
  const add = (path: string, methods: Iterable<string>): void => {
    let set = byPath.get(path);
    if (set === undefined) byPath.set(path, (set = new Set()));
    for (const m of methods) set.add(m);
  };
  const walk = (stack: readonly LayerView[]): void => {
    for (const layer of stack) {
      if (layer.route !== undefined) {
        const paths = Array.isArray(layer.route.path) ? (layer.route.path as unknown[]) : [layer.route.path];
        const methods = Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m] === true);
        // A route that takes every method has no wrong one.
        if (methods.includes('_all')) continue;
        for (const p of paths) {
          if (typeof p !== 'string')
            throw new Error(`route path ${String(p)} is not a string: its 405 answers cannot be derived`);
          add(
            p,
            methods.map((m) => m.toUpperCase()),
          );
        }
        continue;
      }
      const nested = (layer.handle as { readonly stack?: unknown } | undefined)?.stack;
      if (!Array.isArray(nested)) continue; // a middleware
      if (layer.slash !== true)
        throw new Error(
          `a router mounted at ${JSON.stringify(layer.rawPath)}: its routes' paths are not their own, so their 405 answers cannot be derived`,
        );
      walk(nested as LayerView[]);
    }
  };
  for (const r of routers) walk(r.stack as unknown as LayerView[]);
  for (const o of outside) add(o.path, o.methods);
  const allowed = new Map<string, string>();
  for (const [path, set] of byPath) {
    if (set.has('GET')) set.add('HEAD');
    allowed.set(path, [...set].sort(byOrder).join(', '));
  }
  return allowed;
}

function byOrder(a: string, b: string): number {
  const i = ORDER.indexOf(a);
  const j = ORDER.indexOf(b);
  if (i >= 0 && j >= 0) return i - j;
  if (i >= 0 || j >= 0) return i >= 0 ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Derives the app's allowed methods (its routes so far, and `outside`) and adds, after them, one
 * route per path answering any other method: `Allow`, then `answer`. One route per path, so each
 * 405 is counted under its own handler template in the HTTP metrics.
 */
export function answerWrongMethods(
  app: Express,
  outside: readonly OutsideRoute[],
  answer: (req: Request, res: Response, allow: string) => void,
): AllowedMethods {
  const allowed = allowedMethods([app.router], outside);
  for (const [path, allow] of allowed) {
    app.all(path, (req, res) => {
      res.setHeader('allow', allow);
      answer(req, res, allow);
    });
  }
  return allowed;
}
