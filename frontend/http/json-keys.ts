/**
 * The keys of a JSON object text as written, repeats included: JSON.parse keeps the last of two
 * equal keys without a word, so `{"url": "a", "url": "b"}` would be read as `b` where the query's
 * `url=a&url=b` is refused.
 */

/** Each key of the top-level object of `text` (valid JSON) with how often it is written, in order of first appearance. */
export function topLevelKeyCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth !== 1) continue;
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] !== ':') continue; // a value, not a key
      // Decoded, so "\u0075rl" and "url" are one key, as JSON.parse takes them.
      const key = JSON.parse(text.slice(start, i + 1)) as string;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}
