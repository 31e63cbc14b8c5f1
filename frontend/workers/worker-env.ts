/**
 * A worker process's environment: the frontend's, its worker id, and glibc's malloc told to
 * back its large allocations with transparent huge pages (`glibc.malloc.hugetlb=1` in
 * GLIBC_TUNABLES, glibc 2.35 and later; other libcs ignore it). onnxruntime's buffers and V8's
 * array buffers (the engine's K/V rows) come from malloc; on 2 MiB pages a decode step takes
 * fewer TLB misses (measured on tiny-lm, `npm run bench:huge-pages`, docs/benchmarks.md). The
 * kernel grants them only where /sys/kernel/mm/transparent_hugepage/enabled is `always` or
 * `madvise`. A tunable the environment already sets wins; `TS_WORKER_HUGE_PAGES=0` turns it off.
 */

/** The tunable the worker gets, unless the environment sets glibc.malloc.hugetlb itself. */
export const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb=1';

/** The environment to fork worker `workerId` with. */
export function workerEnv(base: NodeJS.ProcessEnv, workerId: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, TS_WORKER_ID: workerId };
  if (base.TS_WORKER_HUGE_PAGES === '0') return env;
  const tunables = (base.GLIBC_TUNABLES ?? '').split(':').filter((t) => t !== '');
  if (tunables.some((t) => t.startsWith('glibc.malloc.hugetlb='))) return env;
  env.GLIBC_TUNABLES = [...tunables, HUGE_PAGES_TUNABLE].join(':');
  return env;
}
