/**
 * The REAL HAProxy (Debian's `haproxy`) running the shipped deploy/haproxy/haproxy.cfg as is:
 * the addresses go in through the environment the file reads, the runtime socket into a temp dir.
 */
import { spawn, spawnSync } from 'child_process';
import type { ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { freePort, ROOT, tempDir } from './harness.js';
import { until } from '../support/until.js';

/** The shipped config the test runs. */
export const HAPROXY_CFG = path.join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg');

/** The haproxy binary (Debian installs it in /usr/sbin, off a user's PATH), or null when absent. */
export function haproxyBinary(): string | null {
  for (const bin of ['haproxy', '/usr/sbin/haproxy']) {
    if (spawnSync(bin, ['-v'], { encoding: 'utf8' }).status === 0) return bin;
  }
  return null;
}

/** A running HAProxy. */
export interface Haproxy {
  /** `http://127.0.0.1:PORT`, the balancer's front. */
  readonly url: string;
  /** Runs one runtime API command (`show stat`, `set server ...`) and returns its answer. */
  command(cmd: string): Promise<string>;
  /** The backend's servers and their state (`UP`, `DOWN`, `DRAIN`, ...), from `show stat`. */
  servers(): Promise<Record<string, string>>;
  /** One server's retries (`wretr`) and redispatches (`wredis`) so far, from `show stat`. */
  stat(server: string): Promise<{ wretr: number; wredis: number }>;
  stop(): void;
}

/**
 * Starts `haproxy -db -f deploy/haproxy/haproxy.cfg` in front of `servers` (three `HOST:PORT`
 * inference addresses) and resolves when every server is UP.
 */
export async function startHaproxy(bin: string, servers: readonly [string, string, string]): Promise<Haproxy> {
  const dir = tempDir('haproxy');
  const socket = path.join(dir, 'admin.sock');
  const port = await freePort();
  let out = '';
  const proc: ChildProcess = spawn(bin, ['-db', '-f', HAPROXY_CFG], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      TSSERVE_LB_BIND: `127.0.0.1:${port}`,
      TSSERVE_LB_SOCKET: socket,
      TSSERVE_1: servers[0],
      TSSERVE_2: servers[1],
      TSSERVE_3: servers[2],
    },
  });
  proc.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const command = (cmd: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const sock = net.connect(socket);
      let text = '';
      sock.setEncoding('utf8');
      sock.on('error', reject);
      sock.on('data', (d: string) => {
        text += d;
      });
      sock.on('end', () => resolve(text));
      sock.write(cmd + '\n');
    });
  /** The backend's server rows of `show stat`, as column name → value. */
  const rows = async (): Promise<Array<Record<string, string>>> => {
    const csv = (await command('show stat')).split('\n');
    const head = (csv[0] ?? '').replace(/^# /, '').split(',');
    return csv
      .slice(1)
      .map((line) => Object.fromEntries(line.split(',').map((v, i) => [head[i] ?? '', v])))
      .filter((r) => r.pxname === 'tsserve' && r.svname !== 'BACKEND' && r.svname !== undefined);
  };
  const servers_ = async (): Promise<Record<string, string>> =>
    Object.fromEntries((await rows()).map((r) => [r.svname!, r.status ?? '']));
  const stat = async (server: string): Promise<{ wretr: number; wredis: number }> => {
    const r = (await rows()).find((x) => x.svname === server);
    return { wretr: Number(r?.wretr), wredis: Number(r?.wredis) };
  };
  const stop = (): void => {
    proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      async () => {
        if (proc.exitCode !== null) throw new Error(`haproxy exited during start-up:\n${out}`);
        try {
          const s = await servers_();
          return Object.values(s).length === 3 && Object.values(s).every((v) => v === 'UP');
        } catch {
          return false;
        }
      },
      { message: 'haproxy with its three servers UP', timeoutMs: 30_000, observe: () => out },
    );
  } catch (err) {
    stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, command, servers: servers_, stat, stop };
}
