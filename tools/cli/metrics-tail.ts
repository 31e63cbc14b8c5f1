/**
 * `tsserve metrics tail`: follow ts_metrics.log and model_metrics.log across rotations, keep
 * the lines a selection asks for, and show them as a live table per metric and series (sliding
 * window: count, rate, last, mean, exact p50/p99) or as JSON lines; `--request ID` lists what
 * one request wrote in both files; `--once` reads what is there and exits.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import type { TailSelection } from '../tail/filter.js';
import { parseDim, parseSince, selector } from '../tail/filter.js';
import { FileFollower, rotatedPaths } from '../tail/follow.js';
import { jsonLine } from '../tail/json.js';
import type { TailRecord } from '../tail/record.js';
import { toRecord } from '../tail/record.js';
import { TailTable } from '../tail/table.js';

const COMMAND = 'tsserve metrics tail';

/** The metric log files followed, in the order their lines are merged on a tie. */
export const TAIL_FILES: readonly string[] = ['ts_metrics.log', 'model_metrics.log'];

/** How often the files are polled (ms); the table is redrawn at most once a second. */
const POLL_MS = 250;
const REDRAW_MS = 1000;

/** Usage of `tsserve metrics tail`. */
export const TAIL_USAGE = `Usage: tsserve metrics tail [options]

Follow <log-dir>/ts_metrics.log and model_metrics.log (rotation-aware, like tail -F) and show
the metric lines as a table per metric and series, or as JSON lines.

Options:
  --log-dir DIR      the server's log directory (default ./logs, env TS_LOG_DIR)
  --metric NAME      keep this metric (repeatable, comma list allowed)
  --model NAME       keep lines whose ModelName or model_name dimension is NAME
  --dim KEY=VALUE    keep lines with this dimension value (repeatable)
  --request ID       keep what request ID wrote (a batch's lines count for each of its ids);
                     without --json the lines are printed as written, prefixed by their file
  --since TIME       start from TIME: ISO 8601 (2026-11-21T14:35:06Z, or the logs' own
                     2026-11-21T14:35:06,586 as UTC) or a duration ago (90s, 10m, 2h, 1d)
  --window SECONDS   sliding window of the table (default 60)
  --json             JSON lines, one per metric line (default when stdout is not a terminal)
  --table            the table even when stdout is not a terminal
  --once             read what is there and exit (the table is printed once)
  --self             show tsserve_* self-metrics too (hidden unless asked, or named by --metric)
  -h, --help         this text

Without --since, --once and --request read everything (rotated copies .N … .1 first); a live
tail starts one window back. COUNT is every line kept since the start; RATE/S, MEAN, P50 and
P99 (nearest rank, exact) cover the window, which ends now (with --once: at the last line kept).
`;

const FLAGS: readonly FlagDef[] = [
  { flag: 'log-dir', kind: 'string' },
  { flag: 'metric', kind: 'list' },
  { flag: 'model', kind: 'string' },
  { flag: 'dim', kind: 'string' },
  { flag: 'request', kind: 'string' },
  { flag: 'since', kind: 'string' },
  { flag: 'window', kind: 'string' },
  { flag: 'json', kind: 'bool' },
  { flag: 'table', kind: 'bool' },
  { flag: 'once', kind: 'bool' },
  { flag: 'self', kind: 'bool' },
];

/** The self-metrics' prefix (schema/config/names.ts): their lines are hidden unless asked for. */
const SELF_PREFIX = 'tsserve_';

/** The command's settings, checked. */
interface TailOptions {
  readonly logDir: string;
  readonly selection: TailSelection;
  readonly windowMs: number;
  readonly format: 'table' | 'json' | 'lines';
  readonly once: boolean;
  /** Read the rotated copies and the whole current file (else start one window back). */
  readonly history: boolean;
  /** Keep tsserve_* self-metric lines (`--self`, or a `--metric` naming one). */
  readonly self: boolean;
}

function last(values: ReadonlyMap<string, readonly string[]>, flag: string): string | undefined {
  const v = values.get(flag);
  return v === undefined ? undefined : v[v.length - 1];
}

function readOptions(
  values: ReadonlyMap<string, readonly string[]>,
  nowMs: number,
  isTty: boolean,
): TailOptions | string[] {
  const problems: string[] = [];
  const windowText = last(values, 'window') ?? '60';
  const windowS = Number(windowText);
  if (!/^\d+(\.\d+)?$/.test(windowText) || !(windowS > 0))
    problems.push(`--window must be a positive number of seconds, got '${windowText}'`);
  const dims: (readonly [string, string])[] = [];
  for (const d of values.get('dim') ?? []) {
    const kv = parseDim(d);
    if (kv === null) problems.push(`--dim must be KEY=VALUE, got '${d}'`);
    else dims.push(kv);
  }
  const sinceText = last(values, 'since');
  let sinceMs: number | null = null;
  if (sinceText !== undefined) {
    sinceMs = parseSince(sinceText, nowMs);
    if (sinceMs === null) problems.push(`--since must be an ISO 8601 time or a duration like 10m, got '${sinceText}'`);
  }
  if (values.has('json') && values.has('table')) problems.push('--json and --table exclude each other');
  if (problems.length > 0) return problems;
  const once = values.has('once');
  const request = last(values, 'request') ?? null;
  const history = once || request !== null || sinceMs !== null;
  const windowMs = windowS * 1000;
  // --request prints the lines as written unless --json asks otherwise, into a pipe too (grep them).
  const json = values.has('json') || (!values.has('table') && !isTty && request === null);
  return {
    logDir: last(values, 'log-dir') ?? process.env.TS_LOG_DIR ?? './logs',
    selection: {
      metrics: values.get('metric') ?? [],
      model: last(values, 'model') ?? null,
      dims,
      request,
      sinceMs: sinceMs ?? (history ? null : nowMs - windowMs),
    },
    windowMs,
    format: json ? 'json' : request !== null ? 'lines' : 'table',
    once,
    history,
    self: values.has('self') || (values.get('metric') ?? []).some((m) => m.startsWith(SELF_PREFIX)),
  };
}

/** Entry point (from `tsserve metrics tail`); resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS, COMMAND, 0);
  if (parsed.given.help) {
    process.stdout.write(TAIL_USAGE);
    return 0;
  }
  const isTty = process.stdout.isTTY === true;
  const opts = parsed.problems.length > 0 ? [...parsed.problems] : readOptions(parsed.given.values, Date.now(), isTty);
  if (Array.isArray(opts)) {
    process.stderr.write(opts.map((p) => `${COMMAND}: ${p}\n`).join(''));
    return 2;
  }
  if (!fs.statSync(opts.logDir, { throwIfNoEntry: false })?.isDirectory()) {
    process.stderr.write(`${COMMAND}: no log directory ${opts.logDir} (give --log-dir or set TS_LOG_DIR)\n`);
    return 1;
  }
  // A closed pipe (`| head`) ends the command quietly.
  process.stdout.on('error', () => process.exit(0));
  return tail(opts, isTty);
}

async function tail(opts: TailOptions, isTty: boolean): Promise<number> {
  const keep = selector(opts.selection);
  const table = new TailTable(opts.windowMs);
  let unparsed = 0;
  let hiddenSelf = 0;
  let lastKeptMs = Number.NaN;
  /** The newest metric line read, kept or not: what an empty window tells about. */
  let lastSeenMs = Number.NaN;
  const take = (file: string, raws: readonly string[], into: TailRecord[]): void => {
    for (const r of kept(file, [raws])) into.push(r);
  };
  /** The kept records of `file`'s lines, parsed one at a time as the merge asks for them. */
  function* kept(file: string, chunks: Iterable<readonly string[]>): Generator<TailRecord> {
    for (const raws of chunks) {
      for (const raw of raws) {
        if (raw === '') continue;
        const r = toRecord(file, raw);
        if (r === null) {
          unparsed++;
          continue;
        }
        if (!(r.timeMs <= lastSeenMs)) lastSeenMs = r.timeMs;
        if (!opts.self && r.line.name.startsWith(SELF_PREFIX)) hiddenSelf++;
        else if (keep(r)) yield r;
      }
    }
  }
  let out = '';
  const flush = (): void => {
    if (out !== '') process.stdout.write(out);
    out = '';
  };
  const emitOne = (r: TailRecord): void => {
    lastKeptMs = r.timeMs;
    if (opts.format === 'table') table.add(r);
    else {
      out += opts.format === 'json' ? jsonLine(r) : `${r.file}: ${r.raw}\n`;
      if (out.length >= 64 * 1024) flush();
    }
  };
  const emit = (records: readonly TailRecord[]): void => {
    for (const r of records) emitOne(r);
    flush();
  };

  const followers = TAIL_FILES.map((name) => new FileFollower(path.join(opts.logDir, name)));
  /** One file's lines: its rotated copies (one at a time, so one is held in memory), then the current file. */
  function* chunks(f: FileFollower): Generator<readonly string[]> {
    if (opts.history) for (const p of rotatedPaths(f.path)) yield fs.readFileSync(p, 'utf8').split('\n');
    yield f.poll();
  }
  // One time line across both files, merged as read (each file is in time order); on a tie
  // ts_metrics.log first.
  const streams = TAIL_FILES.map((name, i) => kept(name, chunks(followers[i] as FileFollower)));
  const heads = streams.map((st) => st.next());
  for (;;) {
    let best = -1;
    heads.forEach((h, j) => {
      if (
        h.done !== true &&
        (best < 0 || h.value.timeMs < (heads[best] as IteratorYieldResult<TailRecord>).value.timeMs)
      )
        best = j;
    });
    if (best < 0) break;
    emitOne((heads[best] as IteratorYieldResult<TailRecord>).value);
    heads[best] = (streams[best] as Generator<TailRecord>).next();
  }
  flush();
  const footer = (): string =>
    (unparsed > 0 ? `${unparsed} lines were not metric lines\n` : '') +
    (hiddenSelf > 0 ? `${hiddenSelf} lines of tsserve_* self-metrics hidden (--self shows them)\n` : '');
  /** Under an empty table: why it is empty, and how to see further back. */
  const emptyNote = (nowMs: number): string => {
    if (!table.empty) return '';
    if (Number.isNaN(lastSeenMs)) return `no metric line in ${opts.logDir} yet\n`;
    if (opts.history || !(lastSeenMs < nowMs - opts.windowMs)) return 'no metric line matches the selection\n';
    const ago = Math.round((nowMs - lastSeenMs) / 1000);
    return `no metric line in the last ${opts.windowMs / 1000} s: the newest is from ${new Date(lastSeenMs).toISOString()} (${ago} s ago); --once or --since reads further back\n`;
  };

  if (opts.once) {
    for (const f of followers) f.close();
    if (opts.format === 'table')
      process.stdout.write(
        table.render(Number.isNaN(lastKeptMs) ? Date.now() : lastKeptMs) + emptyNote(Date.now()) + footer(),
      );
    return 0;
  }

  return new Promise<number>((resolve) => {
    let drawnAt = 0;
    const draw = (): void => {
      const now = Date.now();
      if (opts.format !== 'table' || now - drawnAt < REDRAW_MS) return;
      drawnAt = now;
      // On a terminal: cursor home and clear, so the table is redrawn in place.
      process.stdout.write((isTty ? '\x1b[H\x1b[2J' : '\n') + table.render(now) + emptyNote(now) + footer());
    };
    draw();
    const timer = setInterval(() => {
      TAIL_FILES.forEach((name, i) => {
        const fresh: TailRecord[] = [];
        take(name, (followers[i] as FileFollower).poll(), fresh);
        emit(fresh);
      });
      draw();
    }, POLL_MS);
    const stop = (): void => {
      clearInterval(timer);
      for (const f of followers) f.close();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
