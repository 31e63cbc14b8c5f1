/**
 * Series keys. Each value is written as `<length>:<value>`, so the key is a prefix code: no
 * choice of values (whatever separators they contain) can make two different tuples collide.
 * prom-client's own key (`k:v,` joined) does not have this property (it merged such series).
 */

/** Encode dimension values (in declared order) into an unambiguous string key. */
export function seriesKey(values: readonly string[]): string {
  let key = '';
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    key += v.length + ':' + v;
  }
  return key;
}
