/**
 * A real Prometheus for end-to-end tests: started on a free loopback port with a given config
 * in a temp directory (its own process group, killed by `stop()`), and its HTTP API.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { freePort } from './harness.js';
import { until } from '../support/until.js';

/** One sample of an instant query: its labels and value (as Prometheus writes it: "NaN", "3"). */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: string;
}

/** A running Prometheus. */
export interface Prometheus {
  readonly url: string;
  /** Instant query through /api/v1/query; rejects with Prometheus's error (a parse error, say). */
  query(expr: string): Promise<PromSample[]>;
  /** Kills the process group. */
  stop(): void;
}

interface QueryAnswer {
  readonly status: string;
  readonly error?: string;
  readonly data?: {
    readonly resultType: string;
    readonly result: ReadonlyArray<{ metric: Record<string, string>; value: [number, string] }>;
  };
}

/**
 * Starts `prometheus` with `config` (prometheus.yml text; `rule_files` paths as given) in `dir`,
 * and waits until it is ready.
 */
export async function startPrometheus(dir: string, config: string): Promise<Prometheus> {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const file = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(file, config);
  const proc = spawn(
    'prometheus',
    [
      `--config.file=${file}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore', detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = (): void => {
    try {
      process.kill(-(proc.pid as number), 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  try {
    await until(
      async () => {
        try {
          return (await fetch(`${url}/-/ready`)).status === 200;
        } catch {
          return false;
        }
      },
      { message: 'Prometheus ready', timeoutMs: 60_000 },
    );
  } catch (err) {
    stop();
    throw err;
  }
  return {
    url,
    stop,
    async query(expr: string): Promise<PromSample[]> {
      const res = await fetch(`${url}/api/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `query=${encodeURIComponent(expr)}`,
      });
      const body = (await res.json()) as QueryAnswer;
      if (body.status !== 'success' || body.data === undefined)
        throw new Error(`query failed: ${body.error ?? res.status}: ${expr}`);
      if (body.data.resultType === 'scalar')
        return [{ metric: {}, value: (body.data.result as unknown as [number, string])[1] }];
      return body.data.result.map((r) => ({ metric: r.metric, value: r.value[1] }));
    },
  };
}
