/** One call per key (a Map key: the same object or string), its promise shared by every caller. */
export function memoize<K, V>(fn: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const seen = new Map<K, Promise<V>>();
  return (key) => {
    let v = seen.get(key);
    if (!v) seen.set(key, (v = fn(key)));
    return v;
  };
}
