/**
 * The 405s of a REAL `tsserve start` (the demo mlp model, every model kind's routes mounted as
 * the CLI mounts them): every path the inference and management ports route answers each method
 * its routes do not take with a 405 whose `Allow` names exactly the ones they take, and no 405
 * to those. The inference app derives the table from its routers (frontend/http/allowed-methods.ts);
 * this pins what the server built from them.
 */
import { expect } from 'chai';
import { agreeing, sweepMethods } from '../support/method-sweep.js';
import { generateStore, removeStores, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';

/** Every path of the inference port and the methods its routes take. */
const INFERENCE: readonly (readonly [string, string])[] = [
  ['/ping', 'GET, HEAD'],
  ['/health', 'GET, HEAD'],
  ['/v2', 'GET, HEAD'],
  ['/v2/health/live', 'GET, HEAD'],
  ['/v2/health/ready', 'GET, HEAD'],
  ['/v2/models/:model{/versions/:version}/ready', 'GET, HEAD'],
  ['/v2/models/:model{/versions/:version}', 'GET, HEAD'],
  ['/v1/audio/speech', 'POST'],
  ['/v1/completions', 'POST'],
  ['/v1/chat/completions', 'POST'],
  ['/v1/models', 'GET, HEAD'],
  ['/v1/models/:model', 'GET, HEAD'],
  ['/version', 'GET, HEAD'],
  ['/tokenize', 'POST'],
  ['/detokenize', 'POST'],
  ['/predictions/:model{/:version}', 'POST, PUT'],
  ['/v2/models/:model{/versions/:version}/infer', 'POST'],
];

/** Every path of the management port and the methods its routes take. */
const MANAGEMENT: readonly (readonly [string, string])[] = [
  ['/models', 'GET, HEAD, POST'],
  ['/models/:name{/:version}', 'GET, HEAD, PUT, DELETE'],
  ['/models/:name/:version/set-default', 'PUT'],
];

describe('405s of every routed path (real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;

  before(async () => {
    server = await startTsserve({ store: generateStore(['mlp']), args: ['--disable-system-metrics'] });
  });

  after(async () => {
    await server?.stop('SIGTERM');
    removeStores();
  });

  it("should answer 405 with Allow exactly the methods each inference path's routes take, and no 405 to those", async () => {
    expect(await sweepMethods(server.inference, new Map(INFERENCE))).to.deep.equal(
      INFERENCE.map(([p, allow]) => agreeing(p, allow)),
    );
  });

  it("should answer 405 with Allow exactly the methods each management path's routes take, and no 405 to those", async () => {
    expect(await sweepMethods(server.management, new Map(MANAGEMENT))).to.deep.equal(
      MANAGEMENT.map(([p, allow]) => agreeing(p, allow)),
    );
  });
});
