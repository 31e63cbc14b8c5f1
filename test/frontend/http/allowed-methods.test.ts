/**
 * allowedMethods: the Allow value of every path, read from the routers' routes (nested routers
 * mounted at `/`, array paths, GET taking HEAD) and the routes served outside express.
 */
import { expect } from 'chai';
import express from 'express';
import { allowedMethods } from '../../../frontend/http/allowed-methods.js';

const ok: express.RequestHandler = (_req, res) => {
  res.end();
};

describe('allowedMethods', () => {
  it('should give each path the methods of all its routes, nested routers included, in GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS order', () => {
    const inner = express.Router();
    inner.delete('/a', ok);
    inner.post(['/b', '/c'], ok);
    const outer = express.Router();
    outer.use((_req, _res, next) => next()); // a middleware: no path of its own
    outer.put('/a', ok);
    outer.get('/a', ok);
    outer.use(inner);
    outer.options('/c', ok);
    outer.patch('/c', ok);
    expect([
      ...allowedMethods(
        [outer],
        [
          { path: '/out', methods: ['PUT', 'POST'] },
          { path: '/c', methods: ['GET'] },
        ],
      ),
    ]).to.deep.equal([
      ['/a', 'GET, HEAD, PUT, DELETE'],
      ['/b', 'POST'],
      ['/c', 'GET, HEAD, POST, PATCH, OPTIONS'],
      ['/out', 'POST, PUT'],
    ]);
  });

  it('should leave out a path whose route takes every method (it has no wrong one)', () => {
    const r = express.Router();
    r.all('/any', ok);
    r.get('/one', ok);
    expect([...allowedMethods([r])]).to.deep.equal([['/one', 'GET, HEAD']]);
  });

  it('should put methods it does not order after the ones it does, alphabetically', () => {
    const r = express.Router();
    r.search('/q', ok);
    r.purge('/q', ok);
    r.post('/q', ok);
    expect([...allowedMethods([r])]).to.deep.equal([['/q', 'POST, PURGE, SEARCH']]);
  });

  it('should refuse a router mounted below / and a route path that is a RegExp, naming them', () => {
    const mounted = express.Router();
    mounted.use('/api', express.Router());
    expect(() => allowedMethods([mounted])).to.throw(
      'a router mounted at "/api": its routes\' paths are not their own, so their 405 answers cannot be derived',
    );
    const rx = express.Router();
    rx.get(/^\/x$/, ok);
    expect(() => allowedMethods([rx])).to.throw(
      'route path /^\\/x$/ is not a string: its 405 answers cannot be derived',
    );
  });
});
