/**
 * The event store port. Two backends implement it (PostgreSQL, EventStoreDB) and one contract test
 * suite runs against both (test/store/contract.ts).
 */

/** Where an event sits in the global order: `commit` first, then `prepare` (EventStoreDB's terms). */
export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export type ExpectedRevision = number | 'no_stream' | 'stream_exists' | 'any';

/** An event to append. `data` and `metadata` must be plain JSON (amounts as strings, never bigint). */
export interface NewEvent<D = unknown> {
  /** Deterministic: derived from the source and the content (see src/events/ids.ts). */
  readonly id: string;
  readonly type: string;
  readonly version: number;
  readonly data: D;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * `data` already serialised in canonical form (`stableStringify(data, true)`), when the caller has it
   * (newEvent does, to derive the id): the store then does not serialise the data again.
   */
  readonly canonicalData?: string;
}

export interface RecordedEvent<D = unknown> {
  readonly id: string;
  readonly stream: string;
  /** 0-based position within the stream. */
  readonly revision: number;
  readonly position: Position;
  /**
   * The append (one `append` or `appendMany` call) the event was written in: the events of one append
   * share it and no other append has it. Readers that act once per append group by it, not by
   * `position.commit`, which EventStoreDB gives each event. PostgreSQL: the append's transaction id;
   * EventStoreDB: an id recorded in the events' metadata.
   */
  readonly appendId: string;
  readonly type: string;
  readonly version: number;
  readonly data: D;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly recordedAt: Date;
}

export interface AppendRequest {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expectedRevision?: ExpectedRevision;
}

export interface AppendResult {
  readonly stream: string;
  /** Revision of the stream's last event after the append (-1: the stream does not exist). */
  readonly revision: number;
  /** Events written now. */
  readonly appended: number;
  /** Events whose ids were already in the stream with the same content: skipped, not an error. */
  readonly duplicates: number;
  /** Position of the last event written now, when any was. */
  readonly position: Position | undefined;
}

/** One event of a bulk append, with the stream it goes to. */
export interface BulkEvent {
  readonly stream: string;
  readonly event: NewEvent;
  /**
   * What the caller counts the event under in the result (`BulkAppendResult.byLabel`); its type when
   * omitted. Lets an importer tell apart, say, the entries of each file it streams.
   */
  readonly label?: string;
}

export interface BulkAppendResult {
  /** One per stream the bulk named, in stream order (`revision`, `position`: as after the append). */
  readonly streams: readonly AppendResult[];
  /** Events written now and events left out (stored already with the same content, or repeated in the bulk). */
  readonly byLabel: ReadonlyMap<string, { readonly appended: number; readonly duplicates: number }>;
}

export interface ReadAllOptions {
  /** Largest number of events returned by one call. */
  readonly maxCount?: number;
}

export interface EventStore {
  readonly backend: 'postgres' | 'eventstoredb';
  /**
   * Appends to one stream. Events whose ids are already in the stream with the same content are
   * skipped (so every retry is safe); if nothing new remains the call succeeds without checking
   * `expectedRevision`. An id already stored with other content, or in another stream, is an error.
   */
  append(
    stream: string,
    events: readonly NewEvent[],
    opts?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /**
   * Appends to several streams, each named by one request (a stream named twice is INVALID_EVENT).
   * PostgreSQL does it in one transaction (all or nothing); EventStoreDB has no multi-stream transaction:
   * it checks every request before writing any, then appends stream by stream (each idempotent, so a
   * retry completes a call cut short by a failure).
   */
  appendMany(requests: readonly AppendRequest[]): Promise<AppendResult[]>;
  /**
   * One append of a stream of events too large to hold (a bank statement of a million entries), read
   * from `batches` while the caller produces them: every stream's expectation is "any". The events keep
   * the order given (their positions follow it) and share one append id. Ids stored already with the same
   * content, and repeats inside the bulk, are left out; an id stored (or repeated) with other content, or
   * in another stream, is EVENT_ID_CONFLICT. All or nothing on PostgreSQL (one transaction): a conflict,
   * or `batches` throwing, writes nothing. EventStoreDB holds the events and appends them with
   * `appendMany` at the end (its guarantees, not atomic across streams).
   */
  appendBulk(batches: AsyncIterable<readonly BulkEvent[]>): Promise<BulkAppendResult>;
  /** The whole stream in revision order; empty when it does not exist. */
  readStream(stream: string, opts?: { fromRevision?: number; maxCount?: number }): Promise<RecordedEvent[]>;
  /**
   * The events of many streams in one read, each stream's in revision order (streams that do not exist give
   * none), only those at or before `atOrBefore` when given. Optional: a backend that cannot read many streams
   * at once leaves it out, and its callers read stream by stream (readStreamsAt in src/export/statements/details.ts).
   */
  readStreams?(streams: readonly string[], opts?: { atOrBefore?: Position }): Promise<RecordedEvent[]>;
  /**
   * Events strictly after `from` (from the start when omitted) in commit order. A follower that passes
   * the last position it saw never skips an event and never sees one twice.
   */
  readAll(from?: Position, opts?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event a reader can see now, or undefined when the store is empty. */
  headPosition(): Promise<Position | undefined>;
  /**
   * The event at exactly this position, or undefined when there is none. A follower checks with it that
   * the event it last applied is still where it saw it: after a store is restored from an older backup
   * and appended to again, a position may hold another event, or none.
   */
  readAt(position: Position): Promise<RecordedEvent | undefined>;
  /**
   * Calls `onAppended` when events may have been appended, by any writer, until the returned function is
   * called. A hint to read again, not a delivery: a call may come with nothing new, and one comes whenever
   * watching starts or resumes after an interruption, so nothing appended meanwhile goes unnoticed.
   * PostgreSQL: LISTEN on the store's notification; EventStoreDB: a live subscription to $all.
   */
  watch(onAppended: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Text form for storage in checkpoints, statements and logs: "commit/prepare". */
export function formatPosition(p: Position): string {
  return `${p.commit}/${p.prepare}`;
}

export function parsePosition(text: string): Position {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new RangeError(`not a position: ${JSON.stringify(text)} (expected commit/prepare)`);
  return { commit: BigInt(m[1]!), prepare: BigInt(m[2]!) };
}
