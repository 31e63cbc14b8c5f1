/** The REAL `statsd` npm daemon on loopback, logging every received metric line (dumpMessages). */
import { spawn } from 'child_process';
import type { ChildProcess } from 'child_process';
import * as dgram from 'dgram';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { freePort, ROOT, tempDir } from './harness.js';
import { until } from '../support/until.js';

/** A running statsd daemon. */
export interface StatsdDaemon {
  readonly port: number;
  /** The daemon's TCP management port (`counters`, `timers`, `gauges` commands). */
  readonly mgmtPort: number;
  /** Every metric line received so far, in order. */
  readonly lines: string[];
  stop(): void;
}

/** The start-up probe line (kept out of `lines`). */
const PROBE = 'tsserve_e2e_probe:1|c';

/** A UDP port on 127.0.0.1 that was free a moment ago (bind 0, read, close). */
export async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  const port = s.address().port;
  await new Promise<void>((resolve) => s.close(resolve));
  return port;
}

/** Starts `node node_modules/statsd/stats.js cfg.js` and resolves once it has echoed a probe packet. */
export async function startStatsd(): Promise<StatsdDaemon> {
  const dir = tempDir('statsd');
  const port = await freeUdpPort();
  const mgmt = await freePort();
  const cfg = path.join(dir, 'config.js');
  fs.writeFileSync(
    cfg,
    `{ port: ${port}, address: '127.0.0.1', mgmt_port: ${mgmt}, mgmt_address: '127.0.0.1', backends: ['./backends/console'], dumpMessages: true, flushInterval: 1000000 }\n`,
  );
  // The shim gives the daemon back util.log, which Node 23+ removed (see the file).
  const shim = path.join(ROOT, 'test', 'e2e', 'fixtures', 'statsd-util-log.cjs');
  const proc: ChildProcess = spawn(
    process.execPath,
    ['--require', shim, path.join(ROOT, 'node_modules', 'statsd', 'stats.js'), cfg],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const lines: string[] = [];
  let up = false;
  let echoed = false;
  let pending = '';
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      if (line.includes('server is up')) up = true;
      const m = / - DEBUG: (.*)$/.exec(line);
      if (m === null) continue;
      if (m[1] === PROBE)
        echoed = true; // start-up probes never reach `lines`
      else lines.push(m[1]);
    }
  });
  const stop = (): void => {
    proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const waitFor = async (cond: () => boolean, what: string): Promise<void> => {
    try {
      await until(
        () => {
          if (proc.exitCode !== null) throw new Error(`statsd daemon exited during start-up (${what})`);
          return cond();
        },
        { message: `statsd daemon: ${what}`, timeoutMs: 30_000 },
      );
    } catch (err) {
      stop();
      throw err;
    }
  };
  await waitFor(() => up, '"server is up"');
  // "server is up" can precede the UDP bind: send probe packets until the daemon echoes one,
  // so the first datagram of a test cannot be lost.
  const probe = dgram.createSocket('udp4');
  const timer = setInterval(() => probe.send(PROBE, port, '127.0.0.1'), 50);
  try {
    await waitFor(() => echoed, 'echo of a probe packet');
  } finally {
    clearInterval(timer);
    await new Promise<void>((resolve) => probe.close(resolve));
  }
  return { port, mgmtPort: mgmt, lines, stop };
}

/** Sends `command` (`counters`, `gauges`, `timers`) to the daemon's management port; its answer up to `END`. */
export async function mgmtCommand(port: number, command: string): Promise<string> {
  const sock = net.connect(port, '127.0.0.1');
  sock.setEncoding('utf8');
  let text = '';
  await new Promise<void>((resolve, reject) => {
    sock.on('error', reject);
    sock.on('data', (d: string) => {
      text += d;
      if (text.includes('END\n')) resolve();
    });
    sock.write(command + '\n');
  });
  sock.destroy();
  return text;
}
