/**
 * The one setting of every property test: a fixed seed and a bounded number of cases, so CI runs
 * the same cases each time and a failure reproduces (fast-check prints the seed and path of a
 * counterexample). `FUZZ_SEED` and `FUZZ_RUNS` in the environment override them for a longer hunt.
 */
import type { Parameters } from 'fast-check';

/** Seeded, bounded fast-check parameters (default seed 26, 200 cases a property). */
export function fuzzSettings<T>(runs = 200): Parameters<T> {
  return {
    seed: Number(process.env.FUZZ_SEED ?? 26),
    numRuns: Number(process.env.FUZZ_RUNS ?? runs),
    endOnFailure: true,
  };
}
