import { expect, it } from 'vitest';
import type { BulkEvent, EventStore, NewEvent, RecordedEvent } from '../../src/store/types';
import { ev, readAllEvents } from './contract';

/**
 * The contract of `appendBulk`, run by eventStoreContract against every backend: one append, idempotent,
 * conflicting content refused with nothing written, a failing source writing nothing.
 */

/** The events as batches produced one at a time, as an importer reading a file gives them. */
export async function* batchesOf(events: readonly BulkEvent[], size = 7): AsyncGenerator<BulkEvent[]> {
  for (let i = 0; i < events.length; i += size) {
    await new Promise((r) => setImmediate(r));
    yield events.slice(i, i + size);
  }
}

/** Events of two streams, interleaved, labelled by parity. */
export function interleaved(a: string, b: string, count: number, from = 0): BulkEvent[] {
  const out: BulkEvent[] = [];
  for (let i = from; i < from + count; i++) {
    const stream = i % 3 === 0 ? b : a;
    out.push({ stream, event: ev(stream, i, { pad: 'x'.repeat(40) }), label: i % 2 ? 'odd' : 'even' });
  }
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return `${(e as { code?: string }).code}: ${(e as Error).message}`;
  }
  return 'no error';
}

function nOf(e: RecordedEvent): number {
  return (e.data as { n: number }).n;
}

function labelCounts(events: readonly BulkEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.label ?? e.event.type] = (out[e.label ?? e.event.type] ?? 0) + 1;
  return out;
}

export function bulkAppendCases(store: () => EventStore, s: () => string): void {
  it('appendBulk: one append, streams continued gaplessly in the order given, counts by label', async () => {
    const [a, b] = [s(), s()];
    await store().append(a, [ev(a, -2), ev(a, -1)]);
    const events = interleaved(a, b, 60);
    const r = await store().appendBulk(batchesOf(events));
    const counts = labelCounts(events);
    expect(Object.fromEntries(r.byLabel)).toEqual({
      even: { appended: counts.even, duplicates: 0 },
      odd: { appended: counts.odd, duplicates: 0 },
    });
    const inA = events.filter((e) => e.stream === a).length;
    const inB = events.length - inA;
    expect(r.streams.map((x) => [x.stream, x.appended, x.duplicates, x.revision])).toEqual(
      [
        [a, inA, 0, inA + 1],
        [b, inB, 0, inB - 1],
      ].sort((x, y) => ((x[0] as string) < (y[0] as string) ? -1 : 1)),
    );
    const readA = await store().readStream(a);
    const readB = await store().readStream(b);
    expect(readA.map((e) => e.revision)).toEqual([...readA.keys()]);
    expect(readB.map((e) => e.revision)).toEqual([...readB.keys()]);
    expect(readA.slice(2).map(nOf)).toEqual(
      events.filter((e) => e.stream === a).map((e) => (e.event.data as { n: number }).n),
    );
    expect(readB.map(nOf)).toEqual(events.filter((e) => e.stream === b).map((e) => (e.event.data as { n: number }).n));
    // one append id, no other append's; each stream's result position is its last event's
    const bulk = [...readA.slice(2), ...readB];
    expect(new Set(bulk.map((e) => e.appendId)).size).toBe(1);
    expect(bulk[0]!.appendId).not.toBe(readA[0]!.appendId);
    for (const x of r.streams) {
      const read = x.stream === a ? readA : readB;
      expect(x.position).toEqual(read[read.length - 1]!.position);
    }
    // a follower sees the bulk's events of each stream in the order given
    const all = (await readAllEvents(store())).filter((e) => e.appendId === bulk[0]!.appendId);
    expect(all).toHaveLength(events.length);
    for (const st of [a, b])
      expect(all.filter((e) => e.stream === st).map(nOf)).toEqual(
        events.filter((e) => e.stream === st).map((e) => (e.event.data as { n: number }).n),
      );
  });

  it('appendBulk again, or overlapping what is stored, adds only what is new', async () => {
    const [a, b] = [s(), s()];
    const first = interleaved(a, b, 30);
    await store().appendBulk(batchesOf(first));
    const again = await store().appendBulk(batchesOf(first));
    const counts = labelCounts(first);
    expect(Object.fromEntries(again.byLabel)).toEqual({
      even: { appended: 0, duplicates: counts.even },
      odd: { appended: 0, duplicates: counts.odd },
    });
    expect(again.streams.every((x) => x.appended === 0 && x.position === undefined)).toBe(true);
    // the last ten again, twenty new, one of them repeated inside the bulk
    const next = [...interleaved(a, b, 30, 20)];
    next.splice(15, 0, next[12]!);
    const r = await store().appendBulk(batchesOf(next, 4));
    const appended = [...r.byLabel.values()].reduce((t, c) => t + c.appended, 0);
    const duplicates = [...r.byLabel.values()].reduce((t, c) => t + c.duplicates, 0);
    expect([appended, duplicates]).toEqual([20, 11]);
    const stored = [...(await store().readStream(a)), ...(await store().readStream(b))];
    expect(stored).toHaveLength(50);
    expect(new Set(stored.map((e) => e.id)).size).toBe(50);
    for (const st of [a, b]) {
      const read = await store().readStream(st);
      expect(read.map((e) => e.revision)).toEqual([...read.keys()]);
      expect(read.map(nOf)).toEqual([...read.map(nOf)].sort((x, y) => x - y));
    }
  });

  it('appendBulk refuses an id stored with other content, or repeated with it, and writes nothing', async () => {
    const [a, b, c] = [s(), s(), s()];
    const stored = ev(a, 5, { pad: 'x'.repeat(40) });
    await store().append(a, [{ ...stored, data: { n: 5, other: true } }]);
    const events = interleaved(a, b, 30);
    expect(await codeOf(store().appendBulk(batchesOf(events)))).toMatch(/^EVENT_ID_CONFLICT: .*different content/);
    expect(await store().readStream(b)).toEqual([]);
    expect(await store().readStream(a)).toHaveLength(1);
    // the same id twice in one bulk, with other content
    const twice: BulkEvent[] = [
      ...interleaved(c, b, 10, 100),
      { stream: c, event: { ...ev(c, 101, { pad: 'x'.repeat(40) }), data: { n: 101, other: true } } },
    ];
    expect(await codeOf(store().appendBulk(batchesOf(twice)))).toMatch(/^EVENT_ID_CONFLICT/);
    expect(await store().readStream(c)).toEqual([]);
    expect(await store().readStream(b)).toEqual([]);
  });

  it('appendBulk writes nothing when its source fails, or one of its events is invalid', async () => {
    const [a, b] = [s(), s()];
    const events = interleaved(a, b, 40);
    async function* failing() {
      yield* batchesOf(events.slice(0, 30));
      throw new Error('the file ended early');
    }
    expect(await codeOf(store().appendBulk(failing()))).toBe('undefined: the file ended early');
    expect(await store().readStream(a)).toEqual([]);
    expect(await store().readStream(b)).toEqual([]);
    const invalid: NewEvent = { ...ev(a, 999), id: 'not-a-uuid' };
    expect(await codeOf(store().appendBulk(batchesOf([...events, { stream: a, event: invalid }])))).toMatch(
      /^INVALID_EVENT: .*UUID/,
    );
    expect(await store().readStream(a)).toEqual([]);
    expect(await store().readStream(b)).toEqual([]);
    // and then the same events go in whole
    const r = await store().appendBulk(batchesOf(events));
    expect([...r.byLabel.values()].reduce((t, c) => t + c.appended, 0)).toBe(40);
  });
}
