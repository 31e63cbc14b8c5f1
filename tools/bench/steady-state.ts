/**
 * One request to each listener's express app (`GET /ping` on the inference port, `GET /metrics`
 * on the metrics port, `GET /models` on the management port), as any running server has had
 * from its health checks, scrapes and operators. Express gives every request it serves its own
 * app's prototypes (`Object.setPrototypeOf(req, app.request)`), so the first one makes node's
 * HTTP code and the listeners' shared code see a second map of `req` and `res` and deoptimize;
 * a bench whose baseline never reaches express measures the light path in a state no real server
 * is in (`npm run bench:management-probe` shows it). Benches call this in every run, before their
 * warm-up, so the runs they compare differ only in what they measure.
 */
import type { SpawnedServer } from './spawn-server.js';

/** Sends the three requests, one after the other; rejects naming one that did not answer 200. */
export async function servedByExpress(server: SpawnedServer): Promise<void> {
  for (const url of [`${server.inference}/ping`, `${server.metrics}/metrics`, `${server.management}/models`]) {
    const r = await fetch(url);
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  }
}
