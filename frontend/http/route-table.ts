/**
 * The routes a router serves, declared where they are added. Each route file builds its express
 * router through `routeTable()` (`r.get(path, ...)`, `r.post(...)`, `r.mount(other)`), so the
 * methods every path takes (what its 405 says in `Allow`) are read from this table, never from
 * express's internal router stack. The routes served on node's request before express (the fast
 * `/predictions` and `/v2/.../infer`) are mounted in the same table and served by it first.
 */
import express from 'express';
import type { ErrorRequestHandler, IRouterMatcher, RequestHandler, Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'http';
import type { AllowedMethods } from './allowed-methods.js';
import { allowValue } from './allowed-methods.js';
import type { ErrorSender } from './route-helpers.js';
import { pathOf, sendThrown } from './route-helpers.js';

/**
 * A route served on node's request before express: its path as express writes it and as the
 * `pattern` its requests' paths match, its methods, the shape of its errors (a throw is answered
 * 500 in it, as express's error handler did), and its handler, given the pattern's match.
 */
export interface FastRoute {
  readonly path: string;
  readonly methods: readonly string[];
  readonly pattern: RegExp;
  readonly send: ErrorSender;
  readonly serve: (req: IncomingMessage, res: ServerResponse, m: RegExpExecArray) => void;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A router and the routes declared on it. */
export interface RouteTable {
  /** The express router the routes are added to (mount it with `app.use`). */
  readonly router: Router;
  /** A route (express's signature, so handlers see the path's parameters); its path must be a string. */
  readonly get: IRouterMatcher<RouteTable>;
  readonly post: IRouterMatcher<RouteTable>;
  readonly put: IRouterMatcher<RouteTable>;
  readonly delete: IRouterMatcher<RouteTable>;
  readonly options: IRouterMatcher<RouteTable>;
  /** A middleware or error handler on the router (no route: it adds no path). */
  use(handler: RequestHandler | ErrorRequestHandler): RouteTable;
  /** Another table's router mounted at `/` (its paths are its own), its routes with it. */
  mount(other: Router): RouteTable;
  /** A route served before express, on node's request (mounted tables' fast routes come along). */
  fast(route: FastRoute): RouteTable;
  /**
   * The listener serving each request on the first fast route whose methods and pattern take it,
   * any other with `app` (the express app this table's router is mounted in).
   */
  listener(app: Listener): Listener;
  /** The `Allow` value of every declared path, in the order the routes were added. */
  allowed(): AllowedMethods;
}

/** The table (and fast routes) of each router built here, so `mount` finds the routes of the router it is given. */
const TABLES = new WeakMap<Router, { readonly table: RouteTable; readonly fast: readonly FastRoute[] }>();

/** A new router with its table. */
export function routeTable(): RouteTable {
  const router = express.Router();
  const byPath = new Map<string, Set<string>>();
  const fastRoutes: FastRoute[] = [];
  const declare = (path: string, methods: Iterable<string>): void => {
    let set = byPath.get(path);
    if (set === undefined) byPath.set(path, (set = new Set()));
    for (const m of methods) set.add(m);
  };
  /** A route method: declares the path's method, then adds the route to the router. */
  const route = (method: string, add: (path: string, handlers: RequestHandler[]) => void): IRouterMatcher<RouteTable> =>
    ((path: unknown, ...handlers: RequestHandler[]) => {
      if (typeof path !== 'string')
        throw new Error(`route path ${String(path)} is not a string: its 405s cannot be declared`);
      declare(path, [method]);
      add(path, handlers);
      return table;
    }) as IRouterMatcher<RouteTable>;
  const table: RouteTable = {
    router,
    get: route('GET', (p, h) => router.get(p, ...h)),
    post: route('POST', (p, h) => router.post(p, ...h)),
    put: route('PUT', (p, h) => router.put(p, ...h)),
    delete: route('DELETE', (p, h) => router.delete(p, ...h)),
    options: route('OPTIONS', (p, h) => router.options(p, ...h)),
    use(handler) {
      if (TABLES.has(handler as Router)) throw new Error('a router with routes is mounted with mount(), not use()');
      router.use(handler);
      return table;
    },
    mount(other) {
      const t = TABLES.get(other);
      if (t === undefined)
        throw new Error('a router not built by routeTable(): its routes are not declared, so their 405s cannot be');
      for (const [path, allow] of t.table.allowed()) declare(path, allow.split(', '));
      fastRoutes.push(...t.fast);
      router.use(other);
      return table;
    },
    fast(route) {
      declare(route.path, route.methods);
      fastRoutes.push(route);
      return table;
    },
    listener(app) {
      return (req, res) => {
        if (fastRoutes.length > 0) {
          const method = req.method ?? '';
          const path = pathOf(req.url ?? '');
          for (const f of fastRoutes) {
            if (!f.methods.includes(method)) continue;
            const m = f.pattern.exec(path);
            if (m === null) continue;
            try {
              f.serve(req, res, m);
            } catch (e) {
              sendThrown(res, e, f.send);
            }
            return;
          }
        }
        app(req, res);
      };
    },
    allowed() {
      const out = new Map<string, string>();
      for (const [path, set] of byPath) out.set(path, allowValue(set));
      return out;
    },
  };
  TABLES.set(router, { table, fast: fastRoutes });
  return table;
}
