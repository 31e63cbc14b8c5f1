/**
 * routeTable: the Allow value of every path, read from the routes as they are declared (mounted
 * tables included, GET taking HEAD, the fast routes served before express), never from express's
 * router stack; and the fast routes served in the order they were mounted.
 */
import { expect } from 'chai';
import type express from 'express';
import type { IncomingMessage, ServerResponse } from 'http';
import { routeTable } from '../../../frontend/http/route-table.js';
import type { FastRoute } from '../../../frontend/http/route-table.js';

const ok: express.RequestHandler = (_req, res) => {
  res.end();
};

/** A fast route taking `methods` on `path` exactly, recording each request it serves in `served`; `/throws` throws. */
function fastRoute(path: string, methods: readonly string[], served: string[]): FastRoute {
  return {
    path,
    methods,
    pattern: new RegExp(`^${path}$`),
    send: (_res, status, message) => served.push(`${status} ${message}`),
    serve: (req, _res, m) => {
      if (m[0] === '/throws') throw new Error('route failed');
      served.push(`${req.method} ${m[0]}`);
    },
  };
}

const request = (method: string, url: string): IncomingMessage => ({ method, url }) as IncomingMessage;
const response = {} as ServerResponse;

describe('routeTable', () => {
  it('should give each path the methods of all its routes, mounted tables and fast routes included, in GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS order', () => {
    const inner = routeTable().delete('/a', ok).post('/b', ok);
    const outer = routeTable()
      .use(((_req, _res, next) => next()) as express.RequestHandler) // a middleware: no path of its own
      .put('/a', ok)
      .get('/a', ok)
      .mount(inner.router)
      .fast(fastRoute('/out', ['PUT', 'POST'], []))
      .fast(fastRoute('/b', ['GET'], []));
    expect([...outer.allowed()]).to.deep.equal([
      ['/a', 'GET, HEAD, PUT, DELETE'],
      ['/b', 'GET, HEAD, POST'],
      ['/out', 'POST, PUT'],
    ]);
    // The inner table is unchanged by being mounted.
    expect([...inner.allowed()]).to.deep.equal([
      ['/a', 'DELETE'],
      ['/b', 'POST'],
    ]);
  });

  it('should put methods it does not order after the ones it does, alphabetically', () => {
    const t = routeTable().fast(fastRoute('/q', ['SEARCH', 'PURGE', 'POST'], []));
    expect([...t.allowed()]).to.deep.equal([['/q', 'POST, PURGE, SEARCH']]);
  });

  it('should serve a request on the first fast route whose methods and path take it (a mounted table’s too, query ignored), a throw as its 500, and any other with the app', () => {
    const served: string[] = [];
    const inner = routeTable().fast(fastRoute('/inner', ['POST'], served));
    const t = routeTable()
      .fast(fastRoute('/p', ['POST'], served))
      .fast(fastRoute('/p', ['POST', 'PUT'], served))
      .fast(fastRoute('/throws', ['POST'], served))
      .mount(inner.router);
    const listener = t.listener((req) => served.push(`app ${req.method} ${req.url}`));
    for (const [method, url] of [
      ['POST', '/p?x=1'],
      ['PUT', '/p'],
      ['POST', '/inner'],
      ['POST', '/throws'],
      ['GET', '/p'],
      ['POST', '/other'],
    ] as const)
      listener(request(method, url), response);
    // POST /p went to the first of the two routes that take it; each request was served once.
    expect(served).to.deep.equal([
      'POST /p',
      'PUT /p',
      'POST /inner',
      '500 route failed',
      'app GET /p',
      'app POST /other',
    ]);
  });

  it('should refuse to mount a router it did not build, and a table router through use(), naming why', () => {
    const express5Router = ((_req: unknown, _res: unknown, next: () => void) => next()) as unknown as express.Router;
    expect(() => routeTable().mount(express5Router)).to.throw(
      'a router not built by routeTable(): its routes are not declared, so their 405s cannot be',
    );
    expect(() => routeTable().use(routeTable().get('/x', ok).router)).to.throw(
      'a router with routes is mounted with mount(), not use()',
    );
  });
});
