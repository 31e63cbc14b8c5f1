/**
 * Asks every path of an app's allowed-methods table with every common method and says, per
 * path, what came back: the `Allow` value its 405s carried and the methods that were 405s. A
 * path's routes and its 405 agree when the 405s are exactly the methods `Allow` leaves out.
 */

/** The methods asked of each path. */
export const SWEPT_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A path as express writes it made concrete: optional parts left out, each parameter `x`. */
export function concretePath(path: string): string {
  return path.replace(/\{[^}]*\}/g, '').replace(/:\w+/g, 'x');
}

/**
 * One line per path of `allowed`: `<path> allow <Allow of its 405s> 405 for <methods>`, from
 * real requests to `base` (one at a time), in the table's order.
 */
export async function sweepMethods(base: string, allowed: ReadonlyMap<string, string>): Promise<string[]> {
  const lines: string[] = [];
  for (const path of allowed.keys()) {
    const allows = new Set<string>();
    const refused: string[] = [];
    for (const method of SWEPT_METHODS) {
      const r = await fetch(`${base}${concretePath(path)}`, { method });
      await r.arrayBuffer();
      if (r.status !== 405) continue;
      refused.push(method);
      allows.add(r.headers.get('allow') ?? '(none)');
    }
    lines.push(`${path} allow ${[...allows].join(' | ')} 405 for ${refused.join(', ')}`);
  }
  return lines;
}

/** The line sweepMethods gives a path whose routes take exactly `allow`. */
export function agreeing(path: string, allow: string): string {
  const taken = allow.split(', ');
  return `${path} allow ${allow} 405 for ${SWEPT_METHODS.filter((m) => !taken.includes(m)).join(', ')}`;
}
