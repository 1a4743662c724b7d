import {
  BACKWARDS,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamNotFoundError,
  UnknownError,
} from '@eventstore/db-client';
import * as grpc from '@grpc/grpc-js';
import { urlPasswords } from '../url-passwords';
import { appendBulkByAppendMany } from './bulk-by-append-many';
import { createAppender } from './eventstoredb-append';
import { clientConnectionString, consume, guard, toRecorded } from './eventstoredb-read';
import { createStreamLocks, createStreamStates } from './eventstoredb-streams';
import { createAllReader, watchAll } from './eventstoredb-subscribe';
import type { EventStore, ExpectedRevision, NewEvent, Position, RecordedEvent } from './types';

/**
 * EventStoreDB / KurrentDB backend, selected by EVENTSTORE_URL (esdb://, kurrentdb:// or kurrent://).
 * The server deduplicates event ids only on a best-effort basis, so idempotency here is explicit (see
 * eventstoredb-append.ts); the differences from the PostgreSQL backend are listed in docs/store.md.
 */

export interface EventStoreDbOptions {
  /** Milliseconds an append waits for the server (default 10,000, the client's). */
  readonly appendDeadlineMs?: number;
  /** The server's MaxAppendSize in bytes (default 1,048,576, the server's). */
  readonly maxAppendBytes?: number;
}

/** Events read from $all per call while looking for recon's own. */
const PAGE = 200;

/**
 * Runs `fn` with console.warn passing through a filter that removes the connection string's password: the
 * client library warns with the whole string for an option it ignores.
 */
function quietly<T>(connectionString: string, fn: () => T): T {
  const secrets = urlPasswords(connectionString);
  const warn = console.warn;
  console.warn = (...args: unknown[]) =>
    warn(...args.map((a) => (typeof a === 'string' ? secrets.reduce((t, p) => t.split(p).join('[redacted]'), a) : a)));
  try {
    return fn();
  } finally {
    console.warn = warn;
  }
}

/**
 * The server's refusal of a read from a position where no record starts (a log restored from a backup and
 * written again, KurrentDB #3991), told by its gRPC status, never by its text: INVALID_ARGUMENT from
 * EventStoreDB 24.2 on (RpcExceptions.InvalidPositionException), UNKNOWN before (the reader's
 * ReadAllResult.Error). The client calls both UnknownError; any other failure is an error.
 */
function isInvalidPosition(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return e instanceof UnknownError && (code === grpc.status.INVALID_ARGUMENT || code === grpc.status.UNKNOWN);
}

const samePosition = (a: Position, b: Position) => a.commit === b.commit && a.prepare === b.prepare;

export function createEventStoreDbStore(connectionString: string, opts: EventStoreDbOptions = {}): EventStore {
  const url = clientConnectionString(connectionString);
  const client = quietly(connectionString, () => EventStoreDBClient.connectionString(url));
  const states = createStreamStates(client);
  const withStreams = createStreamLocks();
  const readAll = createAllReader(client);
  const watches = new Set<() => Promise<void>>();
  const appendMany = createAppender(client, states, {
    appendDeadlineMs: opts.appendDeadlineMs ?? 10_000,
    maxAppendBytes: opts.maxAppendBytes ?? 1024 * 1024,
  });

  return {
    backend: 'eventstoredb',
    append: async (stream: string, events: readonly NewEvent[], o: { expectedRevision?: ExpectedRevision } = {}) => {
      const request = { stream, events, expectedRevision: o.expectedRevision ?? 'any' };
      const [r] = await guard(() => withStreams([stream], () => appendMany([request])));
      return r!;
    },
    appendMany: (requests) =>
      guard(() =>
        withStreams(
          requests.map((r) => r.stream),
          () => appendMany(requests),
        ),
      ),
    // no bulk path of its own: held, then one appendMany (src/store/bulk-by-append-many.ts)
    appendBulk(batches) {
      return appendBulkByAppendMany(this, batches);
    },
    readStream: (stream, o = {}) => guard(() => readStream(client, stream, o)),
    readAll: (from, o = {}) => guard(() => readAll(from, o.maxCount ?? 1000)),
    headPosition: () => guard(() => headPosition(client)),
    readAt: (position) => guard(() => readAt(client, position)),
    async watch(onAppended) {
      const stop = watchAll(client, onAppended);
      const unwatch = async () => {
        watches.delete(unwatch);
        await stop();
      };
      watches.add(unwatch);
      return unwatch;
    },
    async close() {
      await Promise.all([...watches].map((unwatch) => unwatch()));
      await client.dispose();
    },
  };
}

async function readStream(
  client: EventStoreDBClient,
  stream: string,
  o: { fromRevision?: number; maxCount?: number },
): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  try {
    const read = client.readStream(stream, {
      fromRevision: o.fromRevision ? BigInt(o.fromRevision) : START,
      direction: FORWARDS,
      ...(o.maxCount ? { maxCount: o.maxCount } : {}),
    });
    await consume(read, (resolved) => {
      const r = toRecorded(resolved);
      if (r) out.push(r);
      return undefined;
    });
  } catch (e) {
    if (!(e instanceof StreamNotFoundError)) throw e;
  }
  return out;
}

/** The last event of recon, paging back over the server's own events (system streams, statistics). */
async function headPosition(client: EventStoreDBClient): Promise<Position | undefined> {
  let from: Position | 'end' = 'end';
  for (;;) {
    let found: Position | undefined;
    let last: Position | undefined;
    const start = from;
    await consume(client.readAll({ fromPosition: start, direction: BACKWARDS, maxCount: PAGE }), (resolved) => {
      const p = resolved.event?.position;
      if (!p) return undefined;
      const pos = { commit: p.commit, prepare: p.prepare };
      if (start !== 'end' && samePosition(pos, start)) return undefined;
      last = pos;
      found = toRecorded(resolved)?.position;
      return found === undefined;
    });
    if (found) return found;
    if (!last) return undefined;
    from = last;
  }
}

async function readAt(client: EventStoreDBClient, position: Position): Promise<RecordedEvent | undefined> {
  let out: RecordedEvent | undefined;
  try {
    await consume(client.readAll({ fromPosition: position, direction: FORWARDS, maxCount: 1 }), (resolved) => {
      const p = resolved.event?.position;
      if (p && samePosition(p, position)) out = toRecorded(resolved);
      return false;
    });
  } catch (e) {
    if (isInvalidPosition(e)) return undefined;
    throw e;
  }
  return out;
}
