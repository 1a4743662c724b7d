/** What `boundedMap` tells each call: its lane (0 … limit − 1) and whether the run is stopping. */
export interface Lane {
  /** a lane runs one item at a time, so it can own a resource (a worker thread) */
  readonly index: number;
  /** true once an item failed or the signal aborted: a call may skip its next step */
  readonly stopping: () => boolean;
}

/**
 * `fn` over `items`, at most `limit` at a time, results in the items' order. Used where round trips or
 * threads overlap (re-send requests, statements). After a throw or an abort no item is begun, and the ones
 * under way are let finish before the first error (an abort: its reason) is thrown: nothing is written behind
 * the caller's back once it has been told of the failure, and a lock the caller holds outlives every call.
 */
export async function boundedMap<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  fn: (item: T, lane: Lane) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const stopping = () => failure !== undefined;
  const onAbort = () => {
    failure ??= { error: signal!.reason };
  };
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const lane = async (index: number) => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, { index, stopping });
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, (_, i) => lane(i)));
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure.error;
  return results;
}
