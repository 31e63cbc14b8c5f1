/**
 * The server's health as the probes see it: TorchServe's `/ping` (ready workers against the
 * models' minWorkers, summed over models) and vLLM's `/health` (every model can serve).
 */
import type { ModelDescription, ServedModel } from './served-model.js';

/** TorchServe's `/ping` statuses. */
export type PingStatus = 'Healthy' | 'Partial Healthy' | 'Unhealthy';

/** What `/ping` and `/health` answer from. */
export interface HealthReport {
  readonly ping: PingStatus;
  /** vLLM's `/health`: true when every model that wants workers has at least one ready. */
  readonly serving: boolean;
}

/** Workers of a model that can take requests now (READY or BUSY); no allocation. */
export function readyWorkers(d: ModelDescription): number {
  let n = 0;
  for (const w of d.workers) if (w.status === 'READY' || w.status === 'BUSY') n++;
  return n;
}

/**
 * TorchServe's rule (ModelManager.workerStatus): sum minWorkers and ready workers over every
 * model; all ready → Healthy, some → Partial Healthy, none of a non-zero want → Unhealthy.
 */
export function healthOf(models: readonly ServedModel[]): HealthReport {
  let wanted = 0;
  let ready = 0;
  let serving = true;
  for (const m of models) {
    const d = m.describe();
    const up = readyWorkers(d);
    wanted += d.minWorkers;
    ready += Math.min(up, d.minWorkers);
    if (d.minWorkers > 0 && up === 0) serving = false;
  }
  const ping: PingStatus = ready >= wanted ? 'Healthy' : ready > 0 ? 'Partial Healthy' : 'Unhealthy';
  return { ping, serving };
}
