import { comparePositions, type EventStore, type Position, type RecordedEvent } from './types';

// streams read at once from a store that cannot read many in one call (EventStoreDB)
const STREAMS_IN_FLIGHT = 8;

/**
 * The events of `streams` at or before `cut`, grouped by stream, each in revision order: one read where the store
 * can read many streams at once, else a few streams at a time.
 */
export async function readStreamsAt(
  store: EventStore,
  streams: readonly string[],
  cut: Position,
): Promise<Map<string, RecordedEvent[]>> {
  const byStream = new Map<string, RecordedEvent[]>();
  const keep = (e: RecordedEvent) => {
    if (comparePositions(e.position, cut) > 0) return;
    const list = byStream.get(e.stream);
    if (list) list.push(e);
    else byStream.set(e.stream, [e]);
  };
  if (store.readStreams) {
    for (const e of await store.readStreams(streams, { atOrBefore: cut })) keep(e);
    return byStream;
  }
  for (let i = 0; i < streams.length; i += STREAMS_IN_FLIGHT) {
    const read = await Promise.all(streams.slice(i, i + STREAMS_IN_FLIGHT).map((s) => store.readStream(s)));
    for (const events of read) for (const e of events) keep(e);
  }
  return byStream;
}
