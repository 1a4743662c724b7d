/**
 * The in-memory log of the EventStoreDB stand-in (a test double, not EventStoreDB): streams, the $all
 * order, and the server's decision on an append. Only what recon depends on is modelled; each rule cites
 * where the real server's behaviour is described.
 */

export interface StoredRecord {
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Uint8Array;
  readonly metadata: Uint8Array;
  /** .NET ticks since the Unix epoch, as the server's "created" metadata entry */
  readonly created: bigint;
  /**
   * Log position. Every event is its own record with its own commit and prepare position, both equal
   * (server: the v20+ log writes one prepare per event and gRPC reads report that event's own position;
   * src/EventStore.Core/Services/Transport/Grpc/Streams.Read.cs, "ConvertToReadEvent").
   */
  readonly position: bigint;
  /** Until then the write is not acknowledged: invisible to reads, and a repeat of it is dropped. */
  readonly pendingUntil: number;
}

export interface ProposedEvent {
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Uint8Array;
  readonly metadata: Uint8Array;
}

export type Expected =
  | { kind: 'any' }
  | { kind: 'no_stream' }
  | { kind: 'stream_exists' }
  | { kind: 'revision'; n: number };

export type Decision =
  | { kind: 'written'; records: StoredRecord[] }
  | { kind: 'idempotent'; revision: number; position: bigint }
  | { kind: 'dropped' }
  | { kind: 'wrong_expected_version'; current: number };

/** Where the first event lands: the start of the log holds the server's own records, never an event of ours. */
const FIRST_POSITION = 1024n;

function sizeOf(stream: string, e: ProposedEvent): bigint {
  return BigInt(96 + e.data.length + e.metadata.length + Buffer.byteLength(stream) + Buffer.byteLength(e.type));
}

export function createLog() {
  const all: StoredRecord[] = [];
  const streams = new Map<string, StoredRecord[]>();
  const watchers = new Set<(records: readonly StoredRecord[]) => void>();
  let next = FIRST_POSITION;

  const visible = (r: StoredRecord, now: number) => r.pendingUntil <= now;
  const currentRevision = (stream: string) => (streams.get(stream)?.length ?? 0) - 1;

  /**
   * The events already at revisions from..from+n-1 carry exactly these ids: the append is a repeat.
   * Server: src/EventStore.Core/Services/Storage/ReaderIndex/IndexWriter.cs (CheckCommit): the ids are
   * compared from the expected version on; a repeat whose original is not yet acknowledged is
   * "IdempotentNotReady", which the writer drops without a reply (StorageWriterService.cs, KurrentDB #1915).
   */
  function repeatOf(stream: string, from: number, events: readonly ProposedEvent[]): Decision | undefined {
    const list = streams.get(stream) ?? [];
    if (from < 0 || from + events.length > list.length) return undefined;
    const matched = events.every((e, i) => list[from + i]!.id === e.id);
    if (!matched) return undefined;
    const lastRecord = list[from + events.length - 1]!;
    if (events.some((_, i) => list[from + i]!.pendingUntil > Date.now())) return { kind: 'dropped' };
    return { kind: 'idempotent', revision: lastRecord.revision, position: lastRecord.position };
  }

  function decide(stream: string, expected: Expected, events: readonly ProposedEvent[]): Decision | undefined {
    const current = currentRevision(stream);
    if (events.length === 0) return undefined;
    if (expected.kind === 'any' || expected.kind === 'stream_exists') {
      if (expected.kind === 'stream_exists' && current < 0) return { kind: 'wrong_expected_version', current };
      // "any": the server looks the first id up among the stream's recent events (best effort)
      const at = (streams.get(stream) ?? []).findIndex((r) => r.id === events[0]!.id);
      return at >= 0 ? (repeatOf(stream, at, events) ?? { kind: 'wrong_expected_version', current }) : undefined;
    }
    const n = expected.kind === 'no_stream' ? -1 : expected.n;
    if (n === current) return undefined;
    if (n < current) return repeatOf(stream, n + 1, events) ?? { kind: 'wrong_expected_version', current };
    return { kind: 'wrong_expected_version', current };
  }

  return {
    currentRevision,
    /** Appends as the server would decide; `ackDelayMs` holds the acknowledgement (and visibility) back. */
    append(stream: string, expected: Expected, events: readonly ProposedEvent[], ackDelayMs: number): Decision {
      const decided = decide(stream, expected, events);
      if (decided) return decided;
      const list = streams.get(stream) ?? [];
      streams.set(stream, list);
      const pendingUntil = Date.now() + ackDelayMs;
      const created = BigInt(Date.now()) * 10_000n;
      const records = events.map((e) => {
        const r: StoredRecord = { stream, revision: list.length, ...e, created, position: next, pendingUntil };
        next += sizeOf(stream, e);
        list.push(r);
        all.push(r);
        return r;
      });
      // live subscriptions hear of a write once it is acknowledged (committed), as the server's
      // SubscriptionsService does on InMemoryEventCommitted
      const tell = () => {
        for (const w of watchers) w(records);
      };
      if (ackDelayMs > 0) setTimeout(tell, ackDelayMs);
      else queueMicrotask(tell);
      return { kind: 'written', records };
    },
    /** Calls `fn` with every write once it is visible, until the returned function is called. */
    onVisible(fn: (records: readonly StoredRecord[]) => void): () => void {
      watchers.add(fn);
      return () => watchers.delete(fn);
    },
    /**
     * Visible records from `position` on (inclusive), in log order, stopping at the first one not yet
     * acknowledged: the server's log is read in commit order, so nothing after an uncommitted write shows.
     */
    *scanFrom(position: bigint): Generator<StoredRecord> {
      let lo = 0;
      let hi = all.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (all[mid]!.position < position) lo = mid + 1;
        else hi = mid;
      }
      const now = Date.now();
      for (let i = lo; i < all.length && visible(all[i]!, now); i++) yield all[i]!;
    },
    /** Position of the last visible record (the server's LastIndexedPosition), -1 when there is none. */
    lastPosition(): bigint {
      const now = Date.now();
      for (let i = all.length - 1; i >= 0; i--) if (visible(all[i]!, now)) return all[i]!.position;
      return -1n;
    },
    streamRecords(stream: string): StoredRecord[] | undefined {
      const now = Date.now();
      const list = streams.get(stream)?.filter((r) => visible(r, now));
      return list?.length ? list : undefined;
    },
    /** Visible records of $all in log order. */
    allRecords(): StoredRecord[] {
      const now = Date.now();
      return all.filter((r) => visible(r, now));
    },
    /**
     * Replaces an event's data in place, keeping its place in the log: what someone with access to the server's
     * files could do (the real server offers no such call); tests of the audit journal use it.
     */
    rewrite(id: string, data: Uint8Array): void {
      const at = all.findIndex((r) => r.id === id);
      if (at < 0) throw new Error(`no event ${id}`);
      const changed = { ...all[at]!, data };
      all[at] = changed;
      const list = streams.get(changed.stream)!;
      list[list.findIndex((r) => r.id === id)] = changed;
    },
    /** Whether a position is where a record starts, the start of the log or its end. */
    isBoundary(position: bigint): boolean {
      return position === 0n || position >= next || all.some((r) => r.position === position);
    },
  };
}

export type StandinLog = ReturnType<typeof createLog>;
