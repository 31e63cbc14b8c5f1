/**
 * vLLM's dev-mode endpoints on the inference listener, for every generation model this process
 * serves: `POST /sleep?level=1|2` (200, empty), `POST /wake_up` (200 once the workers are back),
 * `GET /is_sleeping` (`{is_sleeping}`: true when every model sleeps). As in vLLM they are off
 * unless `VLLM_SERVER_DEV_MODE=1`: then they answer 404 saying so. What sleeping does here is
 * frontend/generation/sleep-control.ts.
 */
import { routeTable } from '../http/route-table.js';
import { vllmSwitchOn } from '../../schema/vllm-env.js';
import type { Router } from 'express';
import type { GenerationTarget } from './generation-target.js';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import type { SleepControl } from '../generation/sleep-control.js';

/** What the routes need from the server. */
export interface SleepRoutesOptions {
  readonly list: () => readonly GenerationTarget[];
  /** vLLM's `VLLM_SERVER_DEV_MODE=1`: the routes act; else they answer 404 (`offReason` says why). */
  readonly devMode: boolean;
  readonly offReason?: string;
}

/** True when the process environment turns vLLM's dev mode on (any whole number but 0, as vLLM reads it). */
export function devModeFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return vllmSwitchOn('VLLM_SERVER_DEV_MODE', env);
}

/** The three routes (always in the route table, so the OpenAPI document and 405s know them). */
export function sleepRoutes(opts: SleepRoutesOptions): Router {
  const r = routeTable();
  const sleepers = (): SleepControl[] => opts.list().flatMap((m) => (m.sleeper === undefined ? [] : [m.sleeper]));
  const why = opts.offReason ?? 'start the server with VLLM_SERVER_DEV_MODE=1';
  const off = (path: string): OpenAIError => new OpenAIError(404, `${path} is a vLLM dev-mode endpoint: ${why}`);
  r.post('/sleep', (req, res) => {
    if (!opts.devMode) return sendOpenAIError(res, off('/sleep'));
    const level = typeof req.query.level === 'string' ? req.query.level : '1';
    if (level !== '1' && level !== '2')
      return sendOpenAIError(
        res,
        new OpenAIError(400, `level must be 1 or 2, not ${JSON.stringify(level.slice(0, 16))}`),
      );
    void Promise.all(sleepers().map((s) => s.sleep())).then((answers) => {
      const refused = answers.find((a) => a !== null);
      if (refused !== undefined && refused !== null)
        return sendOpenAIError(res, new OpenAIError(refused.status, refused.message));
      res.status(200).end();
    });
  });
  r.post('/wake_up', (_req, res) => {
    if (!opts.devMode) return sendOpenAIError(res, off('/wake_up'));
    void Promise.all(sleepers().map((s) => s.wakeUp())).then(() => res.status(200).end());
  });
  r.get('/is_sleeping', (_req, res) => {
    if (!opts.devMode) return sendOpenAIError(res, off('/is_sleeping'));
    const all = sleepers();
    res.json({ is_sleeping: all.length > 0 && all.every((s) => s.sleeping) });
  });
  return r.router;
}
