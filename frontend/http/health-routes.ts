/**
 * The probes of the inference listener: TorchServe's `GET /ping` (`{"status": ...}`: 200 for
 * Healthy and Partial Healthy, 500 for Unhealthy) and vLLM's `GET /health` (200 with an empty
 * body when every model can serve, else 503 with an empty body).
 */
import type { Router } from 'express';
import { routeTable } from './route-table.js';
import type { HealthReport } from '../models/health.js';

/** `/ping` and `/health`, answered from `health()` at each call. */
export function healthRoutes(health: () => HealthReport): Router {
  const r = routeTable();
  r.get('/ping', (_req, res) => {
    const h = health();
    res.status(h.ping === 'Unhealthy' ? 500 : 200).json({ status: h.ping });
  });
  r.get('/health', (_req, res) => {
    res.status(health().serving ? 200 : 503).end();
  });
  return r.router;
}
