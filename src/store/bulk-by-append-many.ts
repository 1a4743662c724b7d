import type { BulkAppendResult, BulkEvent, EventStore } from './types';

/**
 * appendBulk for a backend without a bulk path of its own (EventStoreDB): the events are held until
 * `batches` ends, so a failing source writes nothing, then written with one appendMany, stream by stream
 * in the order the streams first appear. Memory grows with the bulk. What was written is read back: the
 * last `appended` events of each stream are this call's.
 */
export async function appendBulkByAppendMany(
  store: Pick<EventStore, 'appendMany' | 'readStream'>,
  batches: AsyncIterable<readonly BulkEvent[]>,
): Promise<BulkAppendResult> {
  const requests = new Map<string, { stream: string; events: BulkEvent['event'][] }>();
  const held: BulkEvent[] = [];
  for await (const batch of batches)
    for (const b of batch) {
      let r = requests.get(b.stream);
      if (!r) requests.set(b.stream, (r = { stream: b.stream, events: [] }));
      r.events.push(b.event);
      held.push(b);
    }
  const results = await store.appendMany([...requests.values()]);
  const written = new Set<string>();
  for (const r of results)
    if (r.appended > 0)
      for (const e of await store.readStream(r.stream, { fromRevision: r.revision - r.appended + 1 }))
        written.add(e.id);
  const byLabel = new Map<string, { appended: number; duplicates: number }>();
  const seen = new Set<string>();
  for (const b of held) {
    const k = b.label ?? b.event.type;
    const counts = byLabel.get(k) ?? { appended: 0, duplicates: 0 };
    byLabel.set(k, counts);
    const id = b.event.id.toLowerCase();
    if (written.has(id) && !seen.has(id)) counts.appended++;
    else counts.duplicates++;
    seen.add(id);
  }
  const streams = [...results].sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
  return { streams, byLabel };
}
