/**
 * The server's health as the probes see it: TorchServe's `/ping` (ready workers against the
 * models' minWorkers, summed over models) and vLLM's `/health` (every model can serve).
 */
import type { ServedModel } from './served-model.js';

/** TorchServe's `/ping` statuses. */
export type PingStatus = 'Healthy' | 'Partial Healthy' | 'Unhealthy';

/** What `/ping` and `/health` answer from. */
export interface HealthReport {
  readonly ping: PingStatus;
  /** vLLM's `/health`: true when every model that wants workers has at least one ready. */
  readonly serving: boolean;
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
    const up = d.workers.filter((w) => w.status === 'READY' || w.status === 'BUSY').length;
    wanted += d.minWorkers;
    ready += Math.min(up, d.minWorkers);
    if (d.minWorkers > 0 && up === 0) serving = false;
  }
  const ping: PingStatus = ready >= wanted ? 'Healthy' : ready > 0 ? 'Partial Healthy' : 'Unhealthy';
  return { ping, serving };
}
