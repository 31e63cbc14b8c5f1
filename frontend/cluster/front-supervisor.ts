/**
 * The primary's fronts (`--api-server-count N`): forks N front processes through node:cluster
 * (they share the inference port, each accepting from it itself), sends
 * each its init and the model table (on every change and twice a second), runs their relayed
 * requests on the primary's models, folds in their metrics, pings each every 5 s and kills one
 * that leaves three pings unanswered (its event loop is blocked), restarts one that dies
 * (counted and logged), and on shutdown drains them, then stops them once the models are idle.
 */
import cluster from 'cluster';
import type { Worker } from 'cluster';
import * as path from 'path';
import type { ForeignFamily } from '../metrics/exposition/foreign-family.js';
import type { ServedModel } from '../models/served-model.js';
import type { FrontRecords } from './front-records.js';
import type { FrontInit, FromFront, ModelSnapshot, ToFront } from './messages.js';
import { isFrontMessage } from './messages.js';
import { ModelRelay } from './model-relay.js';
import { listenError } from '../http/listen-error.js';
import { FrontRestarts } from './front-restarts.js';
import type { FrontRestartOptions } from './front-restarts.js';
import { FrontScrapes } from './front-scrapes.js';
import { Heartbeat } from './heartbeat.js';
import { testHeartbeatMs } from './test-hooks.js';

/** The front entry, next to this compiled file. */
export const FRONT_ENTRY = path.join(import.meta.dirname, 'front-main.js');

/** How often the fronts get the model table even when nothing was announced. */
const MODEL_TABLE_MS = 500;
/** A stopping front that has not exited by then is killed. */
const STOP_TIMEOUT_MS = 15_000;
/**
 * How often each front is pinged, and how many pings in a row it may leave unanswered: a front
 * whose event loop is blocked for 15 s (a Kubernetes liveness probe's three failures) is
 * killed and replaced; synchronous work of less than that only delays its answers.
 */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_MISSES = 3;
/**
 * A front is pinged only once it said hello (its message listener is up): one whose start hangs
 * before that (loading its modules takes 1 to 3 s on a busy 2-core machine) is killed past this.
 */
const HELLO_TIMEOUT_MS = 60_000;

/** What the supervisor needs from the server (and the restart settings, front-restarts.ts). */
export interface FrontSupervisorOptions extends FrontRestartOptions {
  readonly count: number;
  /** The init message, without the model table (filled in per fork). */
  readonly init: Omit<FrontInit, 'type' | 'models' | 'health'>;
  readonly models: () => { readonly models: readonly ModelSnapshot[]; readonly health: FrontInit['health'] };
  readonly lookup: (name: string) => ServedModel | undefined;
  readonly ingest: FrontRecords;
  /** Front entry script (default FRONT_ENTRY). */
  readonly entry?: string;
  /** Ms between two heartbeats (default 5 s, or the test hook's TSSERVE_TEST_FRONT_HEARTBEAT_MS). */
  readonly heartbeatMs?: number;
  /** Heartbeats in a row a front may leave unanswered before it is killed (default 3). */
  readonly heartbeatMisses?: number;
  /** Ms a forked front may take to say hello before it is killed (default 60 s). */
  readonly helloTimeoutMs?: number;
}

interface Front {
  readonly worker: Worker;
  readonly key: string;
  readonly relay: ModelRelay;
  readonly scrapes: FrontScrapes;
  /** Its init was sent: broadcasts reach it from then on. */
  inited: boolean;
  /** Pinged from its hello on. */
  heartbeat: Heartbeat | null;
  /** Killed for a blocked event loop (its exit is on its way). */
  hung: boolean;
}

/** Forks and supervises the front processes. */
export class FrontSupervisor {
  private readonly fronts = new Set<Front>();
  private stopping = false;
  private draining = false;
  private nextScrape = 1;
  private timer: NodeJS.Timeout | null = null;
  private beat: NodeJS.Timeout | null = null;
  private readonly heartbeatMs: number;
  /** Every front of `start()` listened: from then on a front that exits is started again. */
  private started = false;
  private readonly restartPolicy: FrontRestarts;
  private portValue = -1;

  constructor(private readonly opts: FrontSupervisorOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? testHeartbeatMs() ?? HEARTBEAT_MS;
    this.restartPolicy = new FrontRestarts(opts);
  }

  /** Fronts restarted after an unexpected exit. */
  get restarts(): number {
    return this.restartPolicy.count;
  }

  /** The shared inference port (-1 until the first front listens). */
  get port(): number {
    return this.portValue;
  }

  /** Live front processes' pids. */
  pids(): number[] {
    return [...this.fronts].map((f) => f.worker.process.pid ?? -1);
  }

  /** Forks every front; resolves with the shared port once all listen (rejects if one exits first). */
  start(): Promise<number> {
    // Each front accepts from the shared socket itself. With node's default round-robin the
    // primary accepts and hands every connection over; a front killed mid-handoff left that
    // connection open in the primary forever (node never closes or re-sends it), its client hung.
    cluster.schedulingPolicy = cluster.SCHED_NONE;
    cluster.setupPrimary({ exec: this.opts.entry ?? path.resolve(FRONT_ENTRY), args: [], serialization: 'advanced' });
    const all: Promise<number>[] = [];
    for (let i = 0; i < this.opts.count; i++) all.push(this.fork());
    this.timer = setInterval(() => this.announce(), MODEL_TABLE_MS);
    this.timer.unref();
    this.beat = setInterval(() => this.heartbeat(), this.heartbeatMs);
    this.beat.unref();
    return Promise.all(all).then((ports) => {
      this.started = true;
      return ports[0] ?? -1;
    });
  }

  /** Sends the model table to every front now (after a registration or a scale). */
  announce(): void {
    const t = this.opts.models();
    this.broadcast({ type: 'tsserve.front.models', models: t.models, health: t.health });
  }

  /** New requests at the fronts get 503 with Retry-After from now on. */
  drain(): void {
    this.draining = true;
    this.broadcast({ type: 'tsserve.front.drain' });
  }

  /** Every front flushes and exits (call once the models are idle); killed past the bound. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== null) clearInterval(this.timer);
    // A front that hangs while it drains is killed by the stop's own bound.
    if (this.beat !== null) clearInterval(this.beat);
    this.restartPolicy.cancel();
    const exits = [...this.fronts].map(
      (f) =>
        new Promise<void>((resolve) => {
          if (f.worker.isDead()) {
            resolve();
            return;
          }
          const kill = setTimeout(() => f.worker.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
          kill.unref();
          f.worker.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          this.sendTo(f, { type: 'tsserve.front.stop' });
        }),
    );
    await Promise.all(exits);
  }

  /** Every live front's process metrics (each sample with its `pid`); a late front is left out. */
  async processFamilies(): Promise<ForeignFamily[]> {
    const answers = await Promise.all(
      [...this.fronts].map((f) =>
        f.scrapes.ask(this.nextScrape++, (id) => this.sendTo(f, { type: 'tsserve.front.scrape', id })),
      ),
    );
    return answers.flat();
  }

  private fork(): Promise<number> {
    const worker = cluster.fork({ TS_FRONT: '1' });
    const helloMs = this.opts.helloTimeoutMs ?? HELLO_TIMEOUT_MS;
    const helloTimer = setTimeout(() => {
      this.opts.log.error(
        `front process ${String(worker.process.pid)} said no hello within ${helloMs} ms of its fork: its start is hung; killing it (SIGKILL)`,
      );
      worker.process.kill('SIGKILL');
    }, helloMs);
    helloTimer.unref();
    const key = `front-${worker.id}`;
    const front: Front = {
      worker,
      key,
      relay: new ModelRelay(this.opts.lookup, (m) => this.sendTo(front, m)),
      scrapes: new FrontScrapes(),
      inited: false,
      heartbeat: null,
      hung: false,
    };
    this.fronts.add(front);
    return new Promise<number>((resolve, reject) => {
      let listening = false;
      let bindError: Error | null = null;
      const init = (): void => {
        const t = this.opts.models();
        front.inited = true;
        this.sendTo(front, {
          type: 'tsserve.front.init',
          ...this.opts.init,
          ...(this.portValue > 0 ? { port: this.portValue } : {}),
          models: t.models,
          health: t.health,
        });
        if (this.draining) this.sendTo(front, { type: 'tsserve.front.drain' });
      };
      worker.on('message', (raw: unknown) => {
        if (!isFrontMessage(raw)) return;
        const m = raw as FromFront;
        if (m.type === 'tsserve.front.pong') {
          front.heartbeat?.answer(m.seq, performance.now());
          return;
        }
        // A front forked just before the stop (a replacement) is stopped, not started: its init
        // would have it listen, and the stop sent before it could read one went unheard until
        // the 15 s kill.
        if (m.type === 'tsserve.front.hello') {
          clearTimeout(helloTimer);
          if (this.stopping) {
            this.sendTo(front, { type: 'tsserve.front.stop' });
            return;
          }
          front.heartbeat = new Heartbeat(this.opts.heartbeatMisses ?? HEARTBEAT_MISSES, performance.now());
          init();
          return;
        }
        if (m.type === 'tsserve.front.listen-failed') {
          bindError = listenError(
            'inference',
            { host: this.opts.init.host, port: this.portValue > 0 ? this.portValue : this.opts.init.port },
            m,
          );
          return;
        }
        if (m.type === 'tsserve.front.listening') {
          listening = true;
          this.restartPolicy.listened();
          if (this.portValue < 0) this.portValue = m.port;
          resolve(m.port);
          return;
        }
        this.onMessage(front, m);
      });
      worker.on('error', () => {
        /* surfaced through 'exit' */
      });
      // Its series go once it exited AND its channel delivered its last flush ('exit' can come
      // first; a flush read after it would bind the dead front a table and gauge values again).
      let exited = false;
      let disconnected = false;
      const forgetOnce = (): void => {
        if (exited && disconnected) this.opts.ingest.forget(key);
      };
      worker.once('disconnect', () => {
        disconnected = true;
        forgetOnce();
      });
      worker.on('exit', (code, signal) => {
        clearTimeout(helloTimer);
        this.fronts.delete(front);
        front.relay.frontGone();
        exited = true;
        forgetOnce();
        front.scrapes.gone();
        if (!listening)
          reject(
            bindError ??
              new Error(
                `front process ${String(worker.process.pid)} exited before listening (${signal ?? `code ${String(code)}`})`,
              ),
          );
        // A front of the start that failed fails the start (the server stops): none is started again.
        if (this.stopping || !this.started) return;
        // Its exit is logged by the policy; the rejection of its start says the same.
        this.restartPolicy.exited(
          worker.process.pid,
          signal ?? `code ${String(code)}`,
          listening,
          () => void this.fork().catch(() => undefined),
          () => this.stopping,
        );
      });
    });
  }

  /** One heartbeat: pings every front that answered lately, kills one that left too many unanswered. */
  private heartbeat(): void {
    const now = performance.now();
    for (const f of this.fronts) {
      if (f.heartbeat === null || f.hung) continue;
      const t = f.heartbeat.tick(now);
      if (t.kind === 'ping') {
        this.sendTo(f, { type: 'tsserve.front.ping', seq: t.seq });
        continue;
      }
      f.hung = true;
      // The connections it holds hang with it: only SIGKILL frees them (a blocked loop never
      // runs a SIGTERM handler). Its exit restarts it, as any front's.
      this.opts.log.error(
        `front process ${String(f.worker.process.pid)} answered none of its last ${t.missed} heartbeats (one every ${this.heartbeatMs} ms) and was silent for ${(t.silentMs / 1000).toFixed(1)} s: its event loop is blocked; killing it (SIGKILL)`,
      );
      f.worker.process.kill('SIGKILL');
    }
  }

  private onMessage(front: Front, m: FromFront): void {
    switch (m.type) {
      case 'tsserve.front.job':
        front.relay.job(m);
        break;
      case 'tsserve.front.jobs':
        for (const j of m.jobs) front.relay.job(j);
        break;
      case 'tsserve.front.generate':
        front.relay.generate(m);
        break;
      case 'tsserve.front.speak':
        front.relay.speak(m);
        break;
      case 'tsserve.front.cancel':
        front.relay.cancel(m.id);
        break;
      case 'tsserve.front.metrics':
        this.opts.ingest.handle(front.key, m);
        break;
      case 'tsserve.front.process':
        front.scrapes.answer(m.id, m.families);
        break;
      case 'tsserve.front.stopped':
      case 'tsserve.front.hello':
      case 'tsserve.front.listening':
      case 'tsserve.front.pong':
        break;
    }
  }

  private broadcast(m: ToFront): void {
    for (const f of this.fronts) if (f.inited) this.sendTo(f, m);
  }

  private sendTo(f: Front, m: ToFront): boolean {
    if (f.worker.isDead() || !f.worker.isConnected()) return false;
    try {
      f.worker.send(m);
      return true;
    } catch (e) {
      // A message that cannot be serialised fails alone; the front stays up.
      this.opts.log.error(`${f.key}: a message could not be sent: ${String(e)}`);
      return false;
    }
  }
}
