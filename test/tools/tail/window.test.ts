import { expect } from 'chai';
import { percentile, SeriesWindow } from '../../../tools/tail/window.js';

describe('SeriesWindow', () => {
  it('should give exact count, rate, last, mean, p50 and p99 for known values', () => {
    const w = new SeriesWindow(10_000);
    // 1..100 in order, one per 10 ms, ending at t = 1000.
    for (let i = 1; i <= 100; i++) w.add(i * 10, i);
    expect(w.stats(1000)).to.deep.equal({
      count: 100,
      inWindow: 100,
      rate: 10,
      last: 100,
      mean: 50.5,
      p50: 50,
      p99: 99,
      cut: 0,
    });
  });

  it('should sort the window before taking percentiles', () => {
    const w = new SeriesWindow(60_000);
    for (const [t, v] of [
      [1, 9],
      [2, 1],
      [3, 5],
      [4, 3],
    ] as const)
      w.add(t, v);
    expect(w.stats(4)).to.deep.equal({
      count: 4,
      inWindow: 4,
      rate: 4 / 60,
      last: 3,
      mean: 4.5,
      p50: 3,
      p99: 9,
      cut: 0,
    });
  });

  it('should slide: values at or before now - window leave it, COUNT keeps them', () => {
    const w = new SeriesWindow(1000);
    w.add(0, 100);
    w.add(500, 1);
    w.add(600, 2);
    w.add(1500, 4);
    expect(w.stats(1500)).to.deep.equal({ count: 4, inWindow: 2, rate: 2, last: 4, mean: 3, p50: 2, p99: 4, cut: 0 });
    expect(w.stats(3000)).to.deep.equal({
      count: 4,
      inWindow: 0,
      rate: 0,
      last: 4,
      mean: Number.NaN,
      p50: Number.NaN,
      p99: Number.NaN,
      cut: 0,
    });
  });

  it('should keep at most cap values and count the ones cut', () => {
    const w = new SeriesWindow(60_000, 3);
    for (let i = 1; i <= 5; i++) w.add(i, i);
    expect(w.stats(5)).to.deep.equal({ count: 5, inWindow: 3, rate: 3 / 60, last: 5, mean: 4, p50: 4, p99: 5, cut: 2 });
  });

  it('should stay exact past the compaction of its arrays', () => {
    const w = new SeriesWindow(1000);
    for (let i = 0; i < 5000; i++) w.add(i, i);
    expect(w.stats(4999)).to.deep.equal({
      count: 5000,
      inWindow: 1000,
      rate: 1000,
      last: 4999,
      mean: 4499.5,
      p50: 4499,
      p99: 4989,
      cut: 0,
    });
  });
});

describe('percentile', () => {
  it('should take the nearest rank', () => {
    expect([
      percentile([], 50),
      percentile([7], 99),
      percentile([1, 2], 50),
      percentile([1, 2, 3], 50),
      percentile([1, 2, 3], 99),
    ]).to.deep.equal([Number.NaN, 7, 1, 2, 3]);
  });
});
