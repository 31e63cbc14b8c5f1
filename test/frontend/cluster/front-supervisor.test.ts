/**
 * FrontSupervisor over real front processes (node:cluster, the compiled front entry) serving no
 * model: how a front is replaced and stopped, and how a front whose event loop is blocked is
 * told from a busy one (through the front's SIGUSR2 stall hook, which the test's environment
 * switches on for the fronts it forks).
 */
import { expect } from 'chai';
import cluster from 'cluster';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Worker } from 'cluster';
import { FrontRecords } from '../../../frontend/cluster/front-records.js';
import { FrontSupervisor } from '../../../frontend/cluster/front-supervisor.js';
import { bodyLimits } from '../../../frontend/models/body-limits.js';
import type { Log } from '../../../frontend/log/log.js';
import type { FrontMetricsIngest } from '../../../frontend/cluster/front-records.js';
import { STALL_ENV } from '../../../frontend/cluster/test-hooks.js';
import { until } from '../../support/until.js';

const NO_INGEST: FrontMetricsIngest = { handle: () => true, forget: () => undefined };

/** A log keeping its lines as `level: message`. */
function recordingLog(lines: string[]): Log {
  const at =
    (level: string) =>
    (msg: string): void => {
      lines.push(`${level}: ${msg}`);
    };
  const log: Log = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    child: () => log,
    isLevelEnabled: () => true,
  };
  return log;
}

interface Extra {
  entry?: string;
  restartBackoffMs?: number;
  heartbeatMs?: number;
  heartbeatMisses?: number;
  helloTimeoutMs?: number;
  restartCounter?: { record(n: number): void };
}

function supervisor(lines: string[], extra: Extra = {}): FrontSupervisor {
  const log = recordingLog(lines);
  return new FrontSupervisor({
    ...extra,
    count: 1,
    init: {
      host: '127.0.0.1',
      port: 0,
      maxRequestSizeBytes: 1 << 20,
      bodyLimits: bodyLimits(),
      headerTimeoutMs: 0,
      metrics: [],
      processMetrics: false,
    },
    models: () => ({ models: [], health: { ping: 'Healthy', serving: true } }),
    lookup: () => undefined,
    ingest: new FrontRecords(NO_INGEST, log, undefined),
    log,
  });
}

/**
 * Resolves with the next worker other than `than` node:cluster sees listen (a front's own
 * 'listening' message reaches the supervisor before node:cluster's: that of `than` may come after).
 */
function listeningOther(than: Worker): Promise<Worker> {
  return new Promise((resolve) => {
    const on = (w: Worker): void => {
      if (w !== than) {
        cluster.off('listening', on);
        resolve(w);
      }
    };
    cluster.on('listening', on);
  });
}

/** The only front of a one-front supervisor. */
function onlyFront(): Worker {
  const all = Object.values(cluster.workers ?? {});
  expect(all.length).to.equal(1);
  return all[0] as Worker;
}

describe('FrontSupervisor', function () {
  this.timeout(60_000);
  afterEach(() => {
    delete process.env[STALL_ENV];
  });

  it('should kill a front whose event loop is blocked (three heartbeats unanswered) with SIGKILL, log its pid and silence, count the restart and start another', async () => {
    process.env[STALL_ENV] = 'forever';
    const lines: string[] = [];
    const records: number[] = [];
    const sup = supervisor(lines, {
      heartbeatMs: 250,
      heartbeatMisses: 3,
      restartCounter: { record: (n) => records.push(n) },
    });
    try {
      await sup.start();
      const hung = onlyFront();
      const pid = hung.process.pid!;
      const exited = new Promise<string | null>((resolve) =>
        hung.once('exit', (_code, signal: string | null) => resolve(signal)),
      );
      const replaced = listeningOther(hung);
      hung.process.kill('SIGUSR2');
      expect(await exited).to.equal('SIGKILL');
      const replacement = await replaced;
      expect(lines.map((l) => l.replace(/silent for \d+\.\d s/, 'silent for S s'))).to.deep.equal([
        `error: front process ${pid} answered none of its last 3 heartbeats (one every 250 ms) and was silent for S s: its event loop is blocked; killing it (SIGKILL)`,
        `error: front process ${pid} exited (SIGKILL); starting another (restart 1)`,
      ]);
      expect([records, sup.restarts, sup.pids()]).to.deep.equal([[0, 1], 1, [replacement.process.pid]]);
    } finally {
      await sup.stop();
    }
  });

  it('should keep a busy front whose event loop is blocked for less than the deadline (1 s of 2 s), its late answers counting', async () => {
    process.env[STALL_ENV] = '1000';
    const lines: string[] = [];
    const records: number[] = [];
    const sup = supervisor(lines, {
      heartbeatMs: 100,
      heartbeatMisses: 20,
      restartCounter: { record: (n) => records.push(n) },
    });
    try {
      await sup.start();
      const busy = onlyFront();
      busy.process.kill('SIGUSR2');
      // Shipped with its next flush once its loop runs again, so the front lived through the stall.
      await until(() => lines.length > 0, { message: "the stall hook's line", observe: () => lines });
      // A scrape's answer comes after the pongs of every ping sent before it (IPC keeps order).
      await sup.processFamilies();
      expect(lines).to.deep.equal([`info: front-${busy.id}: test hook: event loop blocked for 1000 ms on SIGUSR2`]);
      expect([records, sup.restarts, sup.pids()]).to.deep.equal([[0], 0, [busy.process.pid]]);
    } finally {
      await sup.stop();
    }
  });

  it('should stop a front it is still starting (a replacement) at once, not kill it after 15 s (regression: SIGTERM right after a front died took 17 s and SIGKILLed the new one)', async () => {
    const lines: string[] = [];
    const sup = supervisor(lines);
    await sup.start();
    const first = Object.values(cluster.workers ?? {})[0] as Worker;
    const exits: string[] = [];
    cluster.on('exit', (w, code, signal) =>
      exits.push(`${w === first ? 'first' : 'replacement'} ${signal ?? `code ${code}`}`),
    );
    // The supervisor's own 'exit' listener came first: the replacement is forked when this one runs.
    const stopped = new Promise<void>((resolve) =>
      first.once('exit', () => {
        void sup.stop().then(resolve);
      }),
    );
    first.process.kill('SIGKILL');
    await stopped;
    expect(exits).to.deep.equal(['first SIGKILL', 'replacement code 0']);
    expect(lines).to.deep.equal([
      `error: front process ${first.process.pid} exited (SIGKILL); starting another (restart 1)`,
    ]);
  });

  it('should start a front that died before it listened again after a doubling backoff, not at once in a loop (regression: a front failing at start was forked again and again, as fast as it could die)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-sup-'));
    const dies = path.join(dir, 'dies.cjs');
    fs.writeFileSync(dies, 'process.exit(3);\n');
    const lines: string[] = [];
    const sup = supervisor(lines, { restartBackoffMs: 5 });
    try {
      await sup.start();
      // From now on a new front fails at once (as a broken install would).
      cluster.setupPrimary({ exec: dies });
      const first = Object.values(cluster.workers ?? {})[0] as Worker;
      first.process.kill('SIGKILL');
      await until(() => lines.length >= 4, { message: 'four restarts', observe: () => lines });
      await sup.stop();
      expect(lines.slice(0, 4).map((l) => l.replace(/process \d+/, 'process P'))).to.deep.equal([
        'error: front process P exited (SIGKILL); starting another (restart 1)',
        'error: front process P exited before it listened (code 3); starting another in 5 ms (restart 2)',
        'error: front process P exited before it listened (code 3); starting another in 10 ms (restart 3)',
        'error: front process P exited before it listened (code 3); starting another in 20 ms (restart 4)',
      ]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should kill a front that says no hello (its start hung before any heartbeat could reach it) and fail the start with its exit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-sup-'));
    const entry = path.join(dir, 'silent.cjs');
    fs.writeFileSync(entry, 'setInterval(() => undefined, 1 << 30);\n');
    const lines: string[] = [];
    const sup = supervisor(lines, { entry, helloTimeoutMs: 200 });
    try {
      const refused = await sup.start().then(
        () => 'started',
        (e: unknown) => String(e).replace(/\d{2,}/, 'P'),
      );
      expect([refused, lines.map((l) => l.replace(/process \d+/, 'process P')), sup.restarts]).to.deep.equal([
        'Error: front process P exited before listening (SIGKILL)',
        ['error: front process P said no hello within 200 ms of its fork: its start is hung; killing it (SIGKILL)'],
        0,
      ]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should fail its start with the exit of a front that never listened, and start none again (the server stops)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-sup-'));
    const entry = path.join(dir, 'dies.cjs');
    fs.writeFileSync(entry, 'process.exit(3);\n');
    const lines: string[] = [];
    const sup = supervisor(lines, { entry });
    try {
      const refused = await sup.start().then(
        () => 'started',
        (e: unknown) => String(e).replace(/\d{2,}/, 'P'),
      );
      expect([refused, lines, sup.restarts]).to.deep.equal([
        'Error: front process P exited before listening (code 3)',
        [],
        0,
      ]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
