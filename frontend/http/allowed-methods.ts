/**
 * The methods each path of an app takes, and the 405 with `Allow` that a path answers to any
 * other method (TorchServe's, not a 404 saying the path does not exist). The methods come from
 * the route table the app's routes were declared in (route-table.ts), not from a list kept
 * beside the routers (a second list drifted: a route missing from it answered 405s with 404) nor
 * from express's internal router stack.
 */
import type { Express, Request, Response } from 'express';

/** A route served outside express (on node's request, before the app): its path as express writes it, and its methods. */
export interface OutsideRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

/** The `Allow` value of every routed path (`'GET, HEAD'`), in the order the routes were added. */
export type AllowedMethods = ReadonlyMap<string, string>;

/** The order of methods in an `Allow` value; any other method follows, alphabetically. */
const ORDER: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The `Allow` value of a path's methods: a GET route takes HEAD too, as express answers it. */
export function allowValue(methods: ReadonlySet<string>): string {
  const all = new Set(methods);
  if (all.has('GET')) all.add('HEAD');
  return [...all].sort(byOrder).join(', ');
}

function byOrder(a: string, b: string): number {
  const i = ORDER.indexOf(a);
  const j = ORDER.indexOf(b);
  if (i >= 0 && j >= 0) return i - j;
  if (i >= 0 || j >= 0) return i >= 0 ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Adds to `app`, after its routes, one route per path of `allowed` answering any other method:
 * `Allow`, then `answer`. One route per path, so each 405 is counted under its own handler
 * template in the HTTP metrics. Returns `allowed`.
 */
export function answerWrongMethods(
  app: Express,
  allowed: AllowedMethods,
  answer: (req: Request, res: Response, allow: string) => void,
): AllowedMethods {
  for (const [path, allow] of allowed) {
    app.all(path, (req, res) => {
      res.setHeader('allow', allow);
      answer(req, res, allow);
    });
  }
  return allowed;
}
