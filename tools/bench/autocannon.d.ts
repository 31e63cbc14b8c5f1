// autocannon ships no types; this declares the one call the benchmarks make.
declare module 'autocannon' {
  interface Result {
    readonly requests: { readonly total: number };
    readonly non2xx: number;
    readonly errors: number;
    readonly duration: number;
  }
  function autocannon(opts: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
