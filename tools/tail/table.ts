/**
 * The live table of `tsserve metrics tail`: one row per metric and series (its dimensions),
 * each with a sliding window, rendered as aligned text.
 */
import type { TailRecord } from './record.js';
import type { WindowStats } from './window.js';
import { SeriesWindow, WINDOW_CAP } from './window.js';

/** One row of the table. */
export interface TableRow {
  /** `NAME.UNIT` */
  readonly metric: string;
  /** `K1=V1,K2=V2` in written order (`-` when none; see `showPart`). */
  readonly series: string;
  readonly stats: WindowStats;
}

const HEADER = ['METRIC', 'SERIES', 'COUNT', 'RATE/S', 'LAST', 'MEAN', 'P50', 'P99'] as const;

/** A number for the table: up to 6 significant digits, `-` for NaN. */
export function formatCell(x: number): string {
  return Number.isNaN(x) ? '-' : String(Number(x.toPrecision(6)));
}

/** A dimension name or value for a cell: JSON-quoted when it holds `,` `=` `"` `\\`, a control character or nothing, so a row is one line and unambiguous. */
export function showPart(s: string): string {
  let plain = s !== '';
  for (let i = 0; i < s.length && plain; i++) {
    const c = s.charCodeAt(i);
    plain = c >= 0x20 && c !== 0x2c && c !== 0x3d && c !== 0x22 && c !== 0x5c; // , = " \\
  }
  return plain ? s : JSON.stringify(s);
}

/** Series windows keyed by metric and dimensions. */
export class TailTable {
  private readonly rows = new Map<string, { metric: string; series: string; window: SeriesWindow }>();

  constructor(
    readonly windowMs: number,
    private readonly cap = WINDOW_CAP,
  ) {}

  /** True while no line has been counted. */
  get empty(): boolean {
    return this.rows.size === 0;
  }

  /** Count one line in its series. */
  add(r: TailRecord): void {
    const l = r.line;
    // JSON of the parts: no separator inside a name or value can make two series collide.
    const key = JSON.stringify([l.name, l.unit, l.dimensions]);
    let row = this.rows.get(key);
    if (row === undefined) {
      const series =
        l.dimensions.length === 0 ? '-' : l.dimensions.map(([k, v]) => `${showPart(k)}=${showPart(v)}`).join(',');
      row = { metric: `${l.name}.${l.unit}`, series, window: new SeriesWindow(this.windowMs, this.cap) };
      this.rows.set(key, row);
    }
    row.window.add(r.timeMs, l.value);
  }

  /** Every row with its window ending at `nowMs`, sorted by metric then series. */
  snapshot(nowMs: number): TableRow[] {
    const out = [...this.rows.values()].map((r) => ({
      metric: r.metric,
      series: r.series,
      stats: r.window.stats(nowMs),
    }));
    return out.sort((a, b) =>
      a.metric < b.metric ? -1 : a.metric > b.metric ? 1 : a.series < b.series ? -1 : a.series > b.series ? 1 : 0,
    );
  }

  /** The table as text, header first, columns padded to their widest cell. */
  render(nowMs: number): string {
    const rows = this.snapshot(nowMs);
    const cells: string[][] = [[...HEADER]];
    let cut = 0;
    for (const r of rows) {
      const s = r.stats;
      cut += s.cut;
      cells.push([
        r.metric,
        r.series,
        String(s.count),
        formatCell(s.rate),
        formatCell(s.last),
        formatCell(s.mean),
        formatCell(s.p50),
        formatCell(s.p99),
      ]);
    }
    const widths = HEADER.map((_h, i) => Math.max(...cells.map((c) => (c[i] as string).length)));
    const lines = cells.map((c) =>
      c
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
        .join('  ')
        .trimEnd(),
    );
    const end = new Date(nowMs).toISOString();
    lines.push(
      '',
      `window ${this.windowMs / 1000} s ending ${end}; COUNT is every line since the start${cut > 0 ? `; ${cut} values cut from full windows (cap ${this.cap} per series)` : ''}`,
    );
    return lines.join('\n') + '\n';
  }
}
