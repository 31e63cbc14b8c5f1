/**
 * Partial selection of the largest entries of a logit row, so a sampler never sorts the whole
 * vocabulary per token: a bounded min-heap keeps the best k in O(V log k), then only those k
 * are sorted. Ties go to the lower id, as a stable descending sort would order them.
 */

/** True when entry a ranks below entry b (smaller value, or equal value and larger id). */
function below(v: Float32Array, a: number, b: number): boolean {
  const x = v[a]!;
  const y = v[b]!;
  return x < y || (x === y && a > b);
}

function siftDown(v: Float32Array, heap: Int32Array, size: number, at: number): void {
  let i = at;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) return;
    const r = l + 1;
    const c = r < size && below(v, heap[r]!, heap[l]!) ? r : l;
    if (!below(v, heap[c]!, heap[i]!)) return;
    const t = heap[i]!;
    heap[i] = heap[c]!;
    heap[c] = t;
    i = c;
  }
}

function siftUp(v: Float32Array, heap: Int32Array, at: number): void {
  let i = at;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!below(v, heap[i]!, heap[p]!)) return;
    const t = heap[i]!;
    heap[i] = heap[p]!;
    heap[p] = t;
    i = p;
  }
}

/**
 * The ids of the (at most) k largest entries of `v` that are >= `floor`, largest first; -Infinity
 * entries never qualify. O(V log k) time, O(k) space.
 */
export function topKIds(v: Float32Array, k: number, floor = -Infinity): Int32Array {
  const want = Math.min(k, v.length);
  const heap = new Int32Array(Math.max(want, 0));
  if (want <= 0) return heap;
  let size = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (x === -Infinity || x < floor) continue;
    if (size < want) {
      heap[size] = i;
      siftUp(v, heap, size++);
    } else if (below(v, heap[0]!, i)) {
      heap[0] = i;
      siftDown(v, heap, size, 0);
    }
  }
  // Pop the min to the back: the heap array ends up largest first.
  const out = heap.subarray(0, size);
  for (let end = size - 1; end > 0; end--) {
    const t = out[0]!;
    out[0] = out[end]!;
    out[end] = t;
    siftDown(v, out, end, 0);
  }
  return out;
}

/** Ids of `v` sorted by value, largest first (the full sort the benchmarks compare against). */
export function sortedIds(v: Float32Array): number[] {
  const idx: number[] = [];
  for (let i = 0; i < v.length; i++) if (v[i] !== -Infinity) idx.push(i);
  return idx.sort((x, y) => v[y]! - v[x]! || x - y);
}
