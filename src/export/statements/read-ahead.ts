/**
 * The items of `source`, in its order, read up to `max` ahead of the consumer: a statement's lines come from a
 * cursor and its payments' events from the store, each batch a round trip to PostgreSQL; read ahead, the next
 * batch is on its way while the workbook or the PDF is written from this one, instead of the writer waiting for
 * it. At most `max` items are held; the source is closed when the consumer stops early (its error, a break).
 */
export async function* readAhead<T>(source: AsyncIterable<T>, max: number): AsyncGenerator<T> {
  let queue: T[] = [];
  let ended = false;
  let failed: { error: unknown } | undefined;
  let stop = false;
  let wakeReader: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  const signal = (w: (() => void) | undefined) => w?.();
  const pump = (async () => {
    try {
      for await (const item of source) {
        queue.push(item);
        signal(wakeReader);
        while (queue.length >= max && !stop) await new Promise<void>((resolve) => (wakePump = resolve));
        if (stop) return;
      }
    } catch (error) {
      failed = { error };
    } finally {
      ended = true;
      signal(wakeReader);
    }
  })();
  try {
    for (;;) {
      if (queue.length > 0) {
        const taken = queue;
        queue = [];
        signal(wakePump);
        yield* taken;
        continue;
      }
      if (failed) throw failed.error;
      if (ended) return;
      await new Promise<void>((resolve) => (wakeReader = resolve));
    }
  } finally {
    stop = true;
    signal(wakePump);
    await pump;
  }
}
