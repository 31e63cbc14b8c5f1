/**
 * Requests to each listener's express app (`GET /ping` on the inference port, `GET /metrics` on
 * the metrics port, `GET /models` on the management port), as any running server has had from
 * its health checks, scrapes and operators. Express switches the prototypes of every request it
 * serves (`Object.setPrototypeOf(req, app.request)`, the same for `res`), and V8 (node 20) gives
 * each property added after that switch a map of that one object: every express request shows
 * node's HTTP code and the listeners' shared code (access log, response counts, HTTP metrics,
 * body reads) a new map of `req` and of `res`. Their optimized code deoptimizes ("wrong map")
 * at each of the first few, until their inline caches are megamorphic, which they then stay for
 * the process's life. A bench whose baseline never reaches express measures the light path in a
 * state no real server is in (`npm run bench:management-probe` shows it); benches call this in
 * every run, before their warm-up, so the runs they compare differ only in what they measure.
 */
import type { SpawnedServer } from './spawn-server.js';

/**
 * Rounds of the three requests: past the 4 maps an inline cache holds before it goes
 * megamorphic (V8's --max-valid-polymorphic-map-count), with room to spare.
 */
export const STEADY_ROUNDS = 8;

/** Sends `STEADY_ROUNDS` rounds of the three requests, one after the other; rejects naming one that did not answer 200. */
export async function servedByExpress(server: SpawnedServer): Promise<void> {
  const urls = [`${server.inference}/ping`, `${server.metrics}/metrics`, `${server.management}/models`];
  for (let round = 0; round < STEADY_ROUNDS; round++)
    for (const url of urls) {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
    }
}
