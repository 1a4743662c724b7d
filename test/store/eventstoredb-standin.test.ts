import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import type { EventStore } from '../../src/store/types';
import { startEsdbStandin, type EsdbStandin } from '../support/esdb-standin/server';
import { ev, eventStoreContract, readAllEvents } from './contract';

/**
 * The EventStoreDB backend against the gRPC stand-in (test/support/esdb-standin: not EventStoreDB, a
 * test double serving the client's own service definitions). The same contract runs against a real
 * server in eventstoredb-store.test.ts whenever EVENTSTORE_URL is set.
 */

eventStoreContract('eventstoredb (gRPC stand-in)', async () => {
  const standin = await startEsdbStandin();
  const store = createEventStoreDbStore(standin.url);
  return {
    store,
    teardown: async () => {
      await store.close();
      await standin.stop();
    },
  };
});

/** An event with `bytes` of padding: real events of recon carry a few hundred bytes to kilobytes. */
const padded = (stream: string, n: number, bytes: number) => ev(stream, n, { pad: 'x'.repeat(bytes) });

/** Resolves with the promise's value, or rejects once `ms` have passed. */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)),
  ]);
}

describe('eventstoredb backend against the stand-in: the review findings of issue 15', () => {
  let standin: EsdbStandin;
  let store: EventStore;
  beforeAll(async () => {
    standin = await startEsdbStandin();
    store = createEventStoreDbStore(standin.url);
  });
  afterAll(async () => {
    await store?.close();
    await standin?.stop();
  });

  it('1. reads that stop early cancel their call: 150 head positions in a row on one connection', async () => {
    const stream = 'early-stop';
    for (let i = 0; i < 6; i++)
      await store.append(
        stream,
        Array.from({ length: 50 }, (_, j) => padded(stream, i * 50 + j, 2000)),
      );
    const all = await readAllEvents(store, 100);
    for (let i = 0; i < 150; i++) await within(5000, store.headPosition(), `headPosition call ${i + 1}`);
    for (let i = 0; i < 20; i++) await within(5000, store.readAt(all[i]!.position), `readAt call ${i + 1}`);
    // subscriptions too, ended at the page size or when caught up
    for (let i = 0; i < 150; i++) await within(5000, store.readAll(all[i % 2]!.position, { maxCount: 10 }), 'readAll');
    for (let i = 0; i < 150; i++) await within(5000, store.readAll(all.at(-1)!.position), `caught-up readAll ${i + 1}`);
    // every read the store started has ended at the server
    await new Promise((r) => setTimeout(r, 50));
    expect(standin.stats.openReads).toBe(0);
  }, 30_000);

  it('5. the head is the last event of recon even behind more than 200 events of the server', async () => {
    const stream = 'before-system-events';
    const r = await store.append(stream, [ev(stream, 1)]);
    standin.appendSystemEvents(450);
    expect(await store.headPosition()).toEqual(r.position);
    // and a follower at the head reads nothing more of recon's
    expect(await store.readAll(r.position)).toEqual([]);
  });

  it('6. an append above the server limit of 1 MiB is written in parts, as one append', async () => {
    const stream = 'large-append';
    const events = Array.from({ length: 30 }, (_, i) => padded(stream, i, 100_000));
    const [result] = await store.appendMany([{ stream, events }]);
    expect(result).toMatchObject({ appended: 30, revision: 29 });
    const stored = await store.readStream(stream);
    expect(stored).toHaveLength(30);
    expect(new Set(stored.map((e) => e.appendId)).size).toBe(1);
    // one event above the limit cannot be written: refused before anything is written, naming the event
    const huge = padded('too-large', 1, 1_100_000);
    await expect(store.append('too-large', [huge])).rejects.toMatchObject({
      code: 'INVALID_EVENT',
      message: expect.stringContaining(huge.id),
    });
    expect(await store.readStream('too-large')).toEqual([]);
  });

  it('8a. an append reads only what the stream gained since the store last saw it', async () => {
    const stream = 'no-rereads';
    await store.append(stream, [ev(stream, 0)]);
    const before = standin.stats.eventsSent;
    for (let i = 1; i <= 60; i++) await store.append(stream, [ev(stream, i)]);
    // reading the whole stream before every append sends 1 + 2 + ... + 60 = 1830 events
    expect(standin.stats.eventsSent - before).toBeLessThanOrEqual(120);
  });

  it('8b. appendMany checks every expectation before writing: a refused call writes nothing', async () => {
    await store.append('atomic-b', [ev('atomic-b', 1)]);
    await expect(
      store.appendMany([
        { stream: 'atomic-a', events: [ev('atomic-a', 1)] },
        { stream: 'atomic-b', events: [ev('atomic-b', 2)], expectedRevision: 'no_stream' },
      ]),
    ).rejects.toMatchObject({ code: 'WRONG_EXPECTED_REVISION' });
    expect(await store.readStream('atomic-a')).toEqual([]);
  });

  it('8c. a read position inside a record is no event of recon (readAt)', async () => {
    const stream = 'inside-record';
    const r = await store.append(stream, [ev(stream, 1)]);
    expect(await store.readAt({ commit: r.position!.commit + 3n, prepare: r.position!.prepare + 3n })).toBeUndefined();
  });

  it("8e. $all is filtered on the server: the server's own events are never sent to a follower", async () => {
    const stream = 'filtered';
    const first = await store.append(stream, [ev(stream, 1)]);
    standin.appendSystemEvents(500);
    const second = await store.append(stream, [ev(stream, 2)]);
    const sent = standin.stats.eventsSent;
    const page = await store.readAll(first.position);
    expect(page.map((e) => e.position)).toEqual([second.position]);
    // read unfiltered, the 500 system events between them would be sent and dropped by the client
    expect(standin.stats.eventsSent - sent).toBe(1);
  });

  it('8f. checkpoints move a follower past other events: they are not looked at again on the next read', async () => {
    const stream = 'checkpoints';
    const at = await store.append(stream, [ev(stream, 1)]);
    standin.appendSystemEvents(2000);
    let considered = standin.stats.recordsLookedAt;
    expect(await store.readAll(at.position)).toEqual([]);
    const firstLook = standin.stats.recordsLookedAt - considered;
    expect(firstLook).toBeGreaterThanOrEqual(2000);
    considered = standin.stats.recordsLookedAt;
    expect(await store.readAll(at.position)).toEqual([]);
    // the second read starts at the last checkpoint: at most one search window (32) before the end
    expect(standin.stats.recordsLookedAt - considered).toBeLessThanOrEqual(64);
    // and an event appended after them is read, once
    const next = await store.append(stream, [ev(stream, 2)]);
    expect((await store.readAll(at.position)).map((e) => e.position)).toEqual([next.position]);
    expect(await store.readAll(next.position)).toEqual([]);
  });

  it('8g. a watch hears of appends without reading: no read is started while it waits, and it is cancelled at the end', async () => {
    const other = createEventStoreDbStore(standin.url);
    let calls = 0;
    let woken: (() => void) | undefined;
    const nextCall = () =>
      new Promise<void>((resolve) => {
        woken = resolve;
      });
    const confirmed = nextCall();
    const unwatch = await store.watch(() => {
      calls++;
      woken?.();
    });
    try {
      await within(5000, confirmed, 'confirmation');
      const started = standin.stats.readsStarted;
      const openAfterStart = standin.stats.openReads;
      // the server's own events do not wake it
      standin.appendSystemEvents(100);
      const heard = nextCall();
      const callsBefore = calls;
      await other.append('watched', [ev('watched', 1)]);
      await within(5000, heard, 'the append');
      expect(calls).toBe(callsBefore + 1);
      // the other store read the stream before appending: only its read started, none of the watch's
      expect(standin.stats.readsStarted - started).toBeLessThanOrEqual(2);
      expect(openAfterStart).toBeGreaterThanOrEqual(1);
    } finally {
      await unwatch();
      await other.close();
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(standin.stats.openReads).toBe(0);
  });

  it('8h. appendMany checks its streams in parallel, not one after the other', async () => {
    const requests = Array.from({ length: 40 }, (_, i) => ({
      stream: `parallel-${i}`,
      events: [ev(`parallel-${i}`, 1)],
    }));
    const peak = standin.stats.peakOpenReads;
    standin.stats.peakOpenReads = standin.stats.openReads;
    const results = await store.appendMany(requests);
    expect(results.every((r) => r.appended === 1)).toBe(true);
    expect(standin.stats.peakOpenReads).toBeGreaterThan(1);
    standin.stats.peakOpenReads = Math.max(peak, standin.stats.peakOpenReads);
  });
});

describe('eventstoredb backend against the stand-in: server versions', () => {
  it('8k. a server too old to say a subscription caught up is refused, naming its version', async () => {
    const standin = await startEsdbStandin({ serverVersion: '23.6.0' });
    const store = createEventStoreDbStore(standin.url);
    try {
      await store.append('old-server', [ev('old-server', 1)]);
      await expect(within(5000, store.readAll(), 'readAll')).rejects.toThrow(
        /server version 23\.6\.0.*23\.10 or later/,
      );
      expect(standin.stats.subscriptionsStarted).toBe(0);
    } finally {
      await store.close();
      await standin.stop();
    }
  });

  // readAt inside a record
  for (const version of ['v24.10', 'v23.10'] as const) {
    it(`8i. ${version}: the refusal is told by its status, not its text`, async () => {
      const standin = await startEsdbStandin({ invalidPositionAs: version });
      const store = createEventStoreDbStore(standin.url);
      try {
        const r = await store.append('by-version', [ev('by-version', 1)]);
        const inside = { commit: r.position!.commit + 3n, prepare: r.position!.prepare + 3n };
        expect(await store.readAt(inside)).toBeUndefined();
        expect((await store.readAt(r.position!))?.id).toBe(ev('by-version', 1).id);
      } finally {
        await store.close();
        await standin.stop();
      }
    });
  }
});

describe('eventstoredb backend against the stand-in: connections and restarts', () => {
  it('1b. closing the store ends after reads that stopped early (the client waits for every call it made)', async () => {
    const standin = await startEsdbStandin();
    const store = createEventStoreDbStore(standin.url);
    try {
      await store.append('close-after-reads', [ev('close', 1), ev('close', 2), ev('close', 3)]);
      const [first] = await store.readAll(undefined, { maxCount: 1 });
      await store.readAt(first!.position);
      await store.headPosition();
      await within(5000, store.close(), 'close');
    } finally {
      await standin.stop();
    }
  });

  it('8d. reads of a server that is down fail as STORE_UNAVAILABLE', async () => {
    const standin = await startEsdbStandin();
    const store = createEventStoreDbStore(standin.url);
    await store.append('down', [ev('down', 1)]);
    await standin.stop();
    try {
      const reads = [
        () => store.readAll(),
        () => store.headPosition(),
        () => store.readStream('down'),
        () => store.readAt({ commit: 1024n, prepare: 1024n }),
      ];
      for (const read of reads) await expect(read()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    } finally {
      await store.close();
    }
  });

  it('8j. a watch cut off by a server restart subscribes again and hears the appends after it', async () => {
    const standin = await startEsdbStandin();
    const store = createEventStoreDbStore(standin.url);
    let calls = 0;
    let woken: (() => void) | undefined;
    const nextCall = () =>
      new Promise<void>((resolve) => {
        woken = resolve;
      });
    let heard = nextCall();
    const unwatch = await store.watch(() => {
      calls++;
      woken?.();
    });
    try {
      await within(5000, heard, 'confirmation');
      heard = nextCall();
      await standin.restart();
      // confirmed again: the caller reads whatever was appended while the subscription was down
      await within(10_000, heard, 'confirmation after the restart');
      expect(standin.stats.subscriptionsStarted).toBe(2);
      heard = nextCall();
      await store.append('after-restart', [ev('after-restart', 1)]);
      await within(5000, heard, 'the append after the restart');
      expect(calls).toBe(3);
    } finally {
      await unwatch();
      await within(5000, store.close(), 'close');
      await standin.stop();
    }
  }, 20_000);

  it('7. kurrentdb:// and kurrent:// connection strings reach the server', async () => {
    const standin = await startEsdbStandin();
    try {
      for (const scheme of ['kurrentdb', 'kurrent']) {
        const store = createEventStoreDbStore(standin.url.replace(/^esdb:/, `${scheme}:`));
        try {
          expect(await store.append(`scheme-${scheme}`, [ev(scheme, 1)])).toMatchObject({ appended: 1 });
        } finally {
          await store.close();
        }
      }
    } finally {
      await standin.stop();
    }
  });

  it("2. a server restart during one store's append does not fail another store's append", async () => {
    // The client's batch append kept one promise table for every connection of the process: an error on
    // one rejected the appends of all, and the late answer to one of them threw an uncaught TypeError
    // (KurrentDB-Client-NodeJS #505, #523).
    const first = await startEsdbStandin({ ackDelayMs: 300 });
    const second = await startEsdbStandin({ ackDelayMs: 600 });
    const a = createEventStoreDbStore(first.url, { appendDeadlineMs: 1500 });
    const b = createEventStoreDbStore(second.url, { appendDeadlineMs: 1500 });
    try {
      // connect both first (server features), then append while the first server restarts
      await a.headPosition();
      await b.headPosition();
      const pa = a.append('restart-a', [ev('restart-a', 1)]).then(
        (r) => r,
        (e: unknown) => e,
      );
      const pb = b.append('restart-b', [ev('restart-b', 1)]);
      await new Promise((r) => setTimeout(r, 100));
      await first.restart();
      expect(await pb).toMatchObject({ appended: 1 });
      // the interrupted append either completed on retry (its events were written before the crash)
      // or failed as STORE_UNAVAILABLE; a retry then finds them written once
      const ra = await pa;
      if (ra instanceof Error) expect(ra).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      else expect(ra).toMatchObject({ appended: 1 });
      expect(await a.readStream('restart-a')).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      await first.stop();
      await second.stop();
    }
  });

  it('4. two stores racing the same events: counted once, and the repeat of an unacknowledged append does not time out', async () => {
    // The server drops a repeat whose original is not yet acknowledged (IdempotentNotReady, KurrentDB #1915).
    const standin = await startEsdbStandin({ ackDelayMs: 400 });
    const a = createEventStoreDbStore(standin.url, { appendDeadlineMs: 1000 });
    const b = createEventStoreDbStore(standin.url, { appendDeadlineMs: 1000 });
    try {
      const stream = 'race';
      await a.append(stream, [ev(stream, 0)]);
      await b.readStream(stream);
      const batch = [ev(stream, 1), ev(stream, 2)];
      const results = await within(8000, Promise.all([a.append(stream, batch), b.append(stream, batch)]), 'race');
      expect(results.map((r) => r.appended).sort()).toEqual([0, 2]);
      expect(results.map((r) => r.duplicates).sort()).toEqual([0, 2]);
      expect((await a.readStream(stream)).map((e) => e.revision)).toEqual([0, 1, 2]);
    } finally {
      await a.close();
      await b.close();
      await standin.stop();
    }
  }, 20_000);
});
