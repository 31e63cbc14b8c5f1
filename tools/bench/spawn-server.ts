/**
 * Starts `tsserve start` as a child process on three free loopback ports and waits for its
 * "Model server started." line: the one way the benchmarks bring up a real server.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'tsserve.js');

/** A free TCP port on 127.0.0.1 (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => res(p));
    });
  });
}

/** A running server: its process (own process group) and base URLs. */
export interface SpawnedServer {
  readonly proc: ChildProcess;
  readonly inference: string;
  readonly management: string;
  readonly metrics: string;
}

/**
 * Spawns `tsserve start <args>` with fresh ports; rejects with its output if it does not start
 * in 60 s (`cli`: another build's bin/tsserve.js, default this one's). A port taken by another process between our probe and the server's listen
 * (EADDRINUSE) is a race, not a failure: up to three tries with fresh ports.
 */
export async function spawnServer(args: readonly string[], cwd?: string, cli = CLI): Promise<SpawnedServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(args, cwd, cli);
    } catch (e) {
      if (attempt >= 3 || !(e instanceof Error) || !e.message.includes('EADDRINUSE')) throw e;
    }
  }
}

async function spawnOnce(args: readonly string[], cwd: string | undefined, cli: string): Promise<SpawnedServer> {
  const [ip, mp, xp] = [await freePort(), await freePort(), await freePort()];
  const urls = {
    inference: `http://127.0.0.1:${ip}`,
    management: `http://127.0.0.1:${mp}`,
    metrics: `http://127.0.0.1:${xp}`,
  };
  const proc = spawn(
    process.execPath,
    [
      cli,
      'start',
      ...args,
      '--inference-address',
      urls.inference,
      '--management-address',
      urls.management,
      '--metrics-address',
      urls.metrics,
    ],
    { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const t0 = Date.now();
  while (!out.includes('Model server started.')) {
    if (proc.exitCode !== null || Date.now() - t0 > 60_000) {
      try {
        if (proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, ...urls };
}

/** Stops a spawned server with SIGTERM and waits for it to exit. */
export async function stopServer(s: SpawnedServer): Promise<void> {
  const exited = new Promise<void>((r) => s.proc.once('exit', () => r()));
  s.proc.kill('SIGTERM');
  await exited;
}
