import {
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
  type AllStreamResolvedEvent,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { EventIdConflictError, StoreUnavailableError, WrongExpectedRevisionError, checkExpected } from './errors';
import { urlPasswords } from '../url-passwords';
import { prepareAppend } from './prepare';
import type {
  AppendRequest,
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  Position,
  RecordedEvent,
} from './types';

/**
 * EventStoreDB / KurrentDB backend, selected by EVENTSTORE_URL. The server deduplicates event ids
 * only on a best-effort basis when appending with `any`, so idempotency here is explicit: read the
 * stream, skip ids it already holds (same content), and append the rest with the exact revision just
 * read. A concurrent writer makes that append fail with a wrong expected version, and the append is
 * tried again from the read.
 */

const RECON_META = '$recon';

interface ReconMeta {
  readonly version: number;
  readonly contentHash: string;
}

function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || e.type.startsWith('$') || e.streamId.startsWith('$') || !e.isJson) return undefined;
  const meta = (e.metadata ?? {}) as Record<string, unknown>;
  const recon = meta[RECON_META] as ReconMeta | undefined;
  if (!recon) return undefined; // not written by recon
  const { [RECON_META]: _omit, ...metadata } = meta;
  if (!e.position) return undefined; // every committed event read from a stream or $all has one
  return {
    id: e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position: { commit: e.position.commit, prepare: e.position.prepare },
    type: e.type,
    version: recon.version,
    data: e.data,
    metadata,
    recordedAt: new Date(e.created),
  };
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const name = (e as Error)?.constructor?.name ?? '';
    if (/Unavailable|Deadline|NotLeader|Cancelled/.test(name))
      throw new StoreUnavailableError(`EventStoreDB unavailable: ${(e as Error).message}`, e);
    throw e;
  }
}

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

export function createEventStoreDbStore(connectionString: string): EventStore {
  const client = quietly(connectionString, () => EventStoreDBClient.connectionString(connectionString));

  async function readExisting(stream: string): Promise<{ revision: number; byId: Map<string, string> }> {
    const byId = new Map<string, string>();
    let revision = -1;
    try {
      for await (const resolved of client.readStream(stream, { fromRevision: START, direction: FORWARDS })) {
        const e = resolved.event;
        if (!e) continue;
        revision = Number(e.revision);
        const recon = (e.metadata as Record<string, unknown> | undefined)?.[RECON_META] as ReconMeta | undefined;
        byId.set(e.id, recon?.contentHash ?? '');
      }
    } catch (e) {
      if (!(e instanceof StreamNotFoundError)) throw e;
    }
    return { revision, byId };
  }

  async function appendOne(request: AppendRequest): Promise<AppendResult> {
    const prepared = prepareAppend([request]);
    const expected: ExpectedRevision = request.expectedRevision ?? 'any';
    for (let attempt = 1; ; attempt++) {
      const { revision, byId } = await readExisting(request.stream);
      const fresh = prepared.filter((p) => {
        const hash = byId.get(p.id);
        if (hash === undefined) return true;
        if (hash !== p.contentHash)
          throw new EventIdConflictError(p.id, request.stream, 'different_content', request.stream);
        return false;
      });
      const duplicates = prepared.length - fresh.length;
      if (fresh.length === 0) return { stream: request.stream, revision, appended: 0, duplicates, position: undefined };
      checkExpected(request.stream, expected, revision);
      try {
        const events = fresh.map((p) =>
          jsonEvent({
            id: p.id,
            type: p.type,
            data: JSON.parse(p.dataJson) as Record<string, unknown>,
            metadata: {
              ...(JSON.parse(p.metadataJson) as Record<string, unknown>),
              [RECON_META]: { version: p.version, contentHash: p.contentHash },
            },
          }),
        );
        const result = await client.appendToStream(request.stream, events, {
          expectedRevision: revision < 0 ? NO_STREAM : BigInt(revision),
        });
        const position: Position | undefined = result.position
          ? { commit: result.position.commit, prepare: result.position.prepare }
          : undefined;
        return {
          stream: request.stream,
          revision: Number(result.nextExpectedRevision),
          appended: fresh.length,
          duplicates,
          position,
        };
      } catch (e) {
        if (e instanceof WrongExpectedVersionError) {
          // Someone appended between our read and our write: read again, whatever the expectation. It may
          // have been the original of this call (this one its retry): its events are then duplicates and
          // the call a no-op; otherwise the expectation is checked against the revision read then.
          if (attempt < 5) continue;
          if (expected !== 'any') {
            const actual = typeof e.actualVersion === 'bigint' ? Number(e.actualVersion) : -1;
            throw new WrongExpectedRevisionError(request.stream, expected, actual < 0 ? 'no_stream' : actual);
          }
        }
        throw e;
      }
    }
  }

  return {
    backend: 'eventstoredb',
    append: (stream: string, events: readonly NewEvent[], opts: { expectedRevision?: ExpectedRevision } = {}) =>
      guard(() => appendOne({ stream, events, expectedRevision: opts.expectedRevision ?? 'any' })),
    async appendMany(requests) {
      // Validate everything before writing anything, so that a bad event in the batch writes nothing.
      prepareAppend(requests);
      const out: AppendResult[] = [];
      for (const r of requests) out.push(await guard(() => appendOne(r)));
      return out;
    },
    async readStream(stream, opts = {}) {
      const out: RecordedEvent[] = [];
      try {
        for await (const resolved of client.readStream(stream, {
          fromRevision: opts.fromRevision ? BigInt(opts.fromRevision) : START,
          direction: FORWARDS,
          ...(opts.maxCount ? { maxCount: opts.maxCount } : {}),
        })) {
          const r = toRecorded(resolved);
          if (r) out.push(r);
        }
      } catch (e) {
        if (!(e instanceof StreamNotFoundError)) throw e;
      }
      return out;
    },
    async readAll(from, opts = {}) {
      const limit = opts.maxCount ?? 1000;
      const out: RecordedEvent[] = [];
      let cursor: Position | undefined = from;
      // $all holds system events too: keep reading until `limit` recon events or the end.
      for (;;) {
        let seen = 0;
        for await (const resolved of client.readAll({
          fromPosition: cursor ? { commit: cursor.commit, prepare: cursor.prepare } : START,
          direction: FORWARDS,
          maxCount: limit + 1,
          resolveLinkTos: false,
        })) {
          seen++;
          const e = resolved.event;
          if (!e?.position) continue;
          const pos = { commit: e.position.commit, prepare: e.position.prepare };
          // fromPosition is inclusive in EventStoreDB; the port's readAll is exclusive.
          if (cursor && pos.commit === cursor.commit && pos.prepare === cursor.prepare) continue;
          cursor = pos;
          const r = toRecorded(resolved);
          if (r) out.push(r);
          if (out.length >= limit) return out;
        }
        if (seen <= 1) return out;
      }
    },
    async headPosition() {
      for await (const resolved of client.readAll({ fromPosition: 'end', direction: 'backwards', maxCount: 200 })) {
        const r = toRecorded(resolved);
        if (r) return r.position;
      }
      return undefined;
    },
    async readAt(position) {
      // fromPosition is inclusive: the first event read is the one at the position, when there is one
      try {
        for await (const resolved of client.readAll({
          fromPosition: { commit: position.commit, prepare: position.prepare },
          direction: FORWARDS,
          maxCount: 1,
          resolveLinkTos: false,
        })) {
          const p = resolved.event?.position;
          if (!p || p.commit !== position.commit || p.prepare !== position.prepare) return undefined;
          return toRecorded(resolved);
        }
      } catch (e) {
        // A position inside another record (a log restored and written again) is refused by the server
        // ("Trying to read from an invalid position", KurrentDB#3991): no event of ours starts there.
        if (e instanceof Error && /invalid position/i.test(e.message)) return undefined;
        throw e;
      }
      return undefined;
    },
    async close() {
      await client.dispose();
    },
  };
}
