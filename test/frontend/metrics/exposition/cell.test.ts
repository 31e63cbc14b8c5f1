import { expect } from 'chai';
import { GaugeCell } from '../../../../frontend/metrics/exposition/cell.js';
import type { MergeKind } from '../../../../frontend/metrics/exposition/merge.js';

/** A cell of `kind` that tracks its writers as the Prometheus sink does, and a way to end one. */
function tracked(kind: MergeKind, live: boolean): { cell: GaugeCell; gone: (source: string) => void } {
  const wrote = new Map<string, GaugeCell>();
  const cell = new GaugeCell('{m="x"}', [], kind, live, (source, c) => {
    wrote.set(source, c);
  });
  return {
    cell,
    gone: (source) => {
      wrote.get(source)?.forget(source);
      wrote.delete(source);
    },
  };
}

describe('GaugeCell', () => {
  it("should hold no entry per exited process after 500 incarnations, keeping each mode's value (regression)", () => {
    const expected: Record<MergeKind, number> = { sum: 125250 + 9, max: 500, min: 1, last: 9 };
    for (const kind of ['sum', 'max', 'min', 'last'] as const) {
      const { cell, gone } = tracked(kind, false);
      const peak: number[] = [];
      for (let i = 1; i <= 500; i++) {
        cell.record(i, undefined, undefined, `w-${i}`);
        peak.push(cell.sources);
        gone(`w-${i}`);
      }
      cell.record(9, undefined, undefined, 'w-501');
      expect([kind, Math.max(...peak), cell.sources, cell.value(), cell.present]).to.deep.equal([
        kind,
        1,
        1,
        expected[kind],
        true,
      ]);
      gone('w-501');
      expect([kind, cell.sources, cell.value()]).to.deep.equal([kind, 0, expected[kind]]);
    }
  });

  it("should drop an exited process's value in a live mode and merge the frontend's own with the retired one", () => {
    const live = tracked('sum', true);
    live.cell.record(4, undefined, undefined, 'w-1');
    live.gone('w-1');
    expect([live.cell.sources, live.cell.value(), live.cell.present]).to.deep.equal([0, 0, false]);
    const last = tracked('last', false);
    last.cell.record(3, undefined, undefined, 'w-1');
    last.cell.record(5, undefined, undefined);
    last.gone('w-1');
    expect(last.cell.value()).to.equal(5); // the frontend's write came after the worker's
    last.cell.record(6, undefined, undefined, 'w-2');
    last.gone('w-2');
    expect(last.cell.value()).to.equal(6); // the retired value is the later one
    last.gone('w-3'); // a process that never wrote the cell
    expect([last.cell.sources, last.cell.value()]).to.deep.equal([0, 6]);
  });
});
