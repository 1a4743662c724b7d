import { randomUUID } from 'node:crypto';
import { NO_STREAM, WrongExpectedVersionError, jsonEvent, type EventStoreDBClient } from '@eventstore/db-client';
import { append as appendOneCall } from '@eventstore/db-client/dist/streams/appendToStream/append.js';
import { EventIdConflictError, InvalidEventError, WrongExpectedRevisionError, meetsExpected } from './errors';
import { RECON_META, isUnavailable } from './eventstoredb-read';
import { eachLimited, type StreamState, type StreamStates } from './eventstoredb-streams';
import { prepareAppend, type PreparedEvent } from './prepare';
import type { AppendRequest, AppendResult, ExpectedRevision, Position } from './types';

export interface AppendOptions {
  /** Milliseconds an append waits for the server's answer (the client's default: 10 s). */
  readonly appendDeadlineMs: number;
  /** The server's MaxAppendSize (default 1 MiB): an append is written in parts below half of it. */
  readonly maxAppendBytes: number;
}

/** Streams read at once by one appendMany while it checks the requests. */
const PARALLEL_STREAMS = 16;
const MAX_ATTEMPTS = 5;

interface Planned {
  readonly request: AppendRequest;
  readonly events: readonly PreparedEvent[];
  readonly expected: ExpectedRevision;
}

/** Bytes of an event as the server counts them against MaxAppendSize (data, metadata, type). */
function sizeOf(p: PreparedEvent, appendId: string): number {
  return (
    Buffer.byteLength(p.dataJson) +
    Buffer.byteLength(p.metadataJson) +
    Buffer.byteLength(p.type) +
    appendId.length +
    160
  );
}

/** Consecutive parts of at most `limit` bytes (an event larger than that alone in its part). */
function parts(events: readonly PreparedEvent[], appendId: string, limit: number): PreparedEvent[][] {
  const out: PreparedEvent[][] = [];
  let part: PreparedEvent[] = [];
  let bytes = 0;
  for (const e of events) {
    const size = sizeOf(e, appendId);
    if (part.length && bytes + size > limit) {
      out.push(part);
      part = [];
      bytes = 0;
    }
    part.push(e);
    bytes += size;
  }
  if (part.length) out.push(part);
  return out;
}

/** Events not yet in the stream; one stored with other content is refused. */
function freshOf(stream: string, events: readonly PreparedEvent[], state: StreamState): PreparedEvent[] {
  return events.filter((p) => {
    const stored = state.byId.get(p.id);
    if (!stored) return true;
    if (stored.hash !== p.contentHash) throw new EventIdConflictError(p.id, stream, 'different_content', stream);
    return false;
  });
}

/** What the steps of an append share: the client, what it knows of each stream, and the limits. */
interface Appending {
  readonly client: EventStoreDBClient;
  readonly states: StreamStates;
  readonly opts: AppendOptions;
}

/**
 * Appends with the exactness the port promises on a server that only deduplicates best-effort: every
 * event carries the call's append id, every part is written at the exact revision known, and what the
 * server answered is confirmed by reading the written revisions back. A repeat of events another writer
 * already wrote gets the server's "idempotent" success (or, while the original is unacknowledged, no
 * answer at all: KurrentDB #1915); read back, they carry the other append's id and count as duplicates.
 */
export function createAppender(client: EventStoreDBClient, states: StreamStates, opts: AppendOptions) {
  const a: Appending = { client, states, opts };
  return (requests: readonly AppendRequest[]): Promise<AppendResult[]> => appendMany(a, requests);
}

async function writePart(
  a: Appending,
  stream: string,
  part: readonly PreparedEvent[],
  revision: number,
  appendId: string,
): Promise<void> {
  const events = part.map((p) =>
    jsonEvent({
      id: p.id,
      type: p.type,
      data: JSON.parse(p.dataJson) as Record<string, unknown>,
      metadata: {
        ...(JSON.parse(p.metadataJson) as Record<string, unknown>),
        [RECON_META]: { version: p.version, contentHash: p.contentHash, appendId },
      },
    }),
  );
  // One call per append (Streams.Append), not the client's batch append, whose promise table is shared by
  // every connection of the process and throws an uncaught TypeError after a reconnect (#505, #523).
  await appendOneCall.call(a.client, stream, events, {
    expectedRevision: revision < 0 ? NO_STREAM : BigInt(revision),
    deadline: a.opts.appendDeadlineMs,
  } as never);
}

/** Writes one request's new events; returns how many this call wrote and the last one's position. */
async function writeStream(
  a: Appending,
  plan: Planned,
  appendId: string,
): Promise<{ appended: number; position?: Position }> {
  const { states, opts } = a;
  const { stream } = plan.request;
  let appended = 0;
  let position: Position | undefined;
  let pending = freshOf(stream, plan.events, await states.get(stream));
  let failures = 0;
  while (pending.length > 0) {
    const state = await states.get(stream);
    const before = state.revision;
    const [part] = parts(pending, appendId, opts.maxAppendBytes / 2);
    let failure: unknown;
    try {
      await writePart(a, stream, part!, before, appendId);
    } catch (e) {
      if (!(e instanceof WrongExpectedVersionError) && !isUnavailable(e)) throw e;
      failure = e;
      failures++;
      if (isUnavailable(e)) await new Promise((r) => setTimeout(r, 100 * failures));
    }
    // Whatever the answer, the written revisions tell what happened (a write cut off may have landed).
    let now: StreamState;
    try {
      now = await states.refresh(stream);
    } catch (e) {
      if (!isUnavailable(e) || failures >= MAX_ATTEMPTS) throw e;
      failures++;
      continue;
    }
    for (const p of pending) {
      const stored = now.byId.get(p.id);
      if (stored?.appendId === appendId) {
        appended++;
        position = stored.position;
      }
    }
    pending = freshOf(stream, pending, now);
    const othersWrote = failure instanceof WrongExpectedVersionError && now.revision > before;
    if (pending.length && othersWrote && plan.expected !== 'any')
      throw new WrongExpectedRevisionError(stream, plan.expected, now.revision);
    if (pending.length && failures >= MAX_ATTEMPTS) throw failure;
  }
  return { appended, ...(position ? { position } : {}) };
}

async function appendMany(a: Appending, requests: readonly AppendRequest[]): Promise<AppendResult[]> {
  const prepared = prepareAppend(requests);
  const appendId = randomUUID();
  for (const p of prepared) {
    if (sizeOf(p, appendId) > a.opts.maxAppendBytes)
      throw new InvalidEventError(
        `event ${p.id}: ${sizeOf(p, appendId)} bytes, above the server's limit of ${a.opts.maxAppendBytes} bytes for one append`,
      );
  }
  const plans: Planned[] = requests.map((request) => ({
    request,
    events: prepared.filter((p) => p.stream === request.stream),
    expected: request.expectedRevision ?? 'any',
  }));
  await checkAll(a.states, plans);
  // Written in the order of the requests, one stream after the other: the events of one append then
  // follow each other in $all in the order given, as in PostgreSQL's transaction, and a projection that
  // names an append by its first or last event names the same one on both backends.
  const written = new Map<AppendRequest, { appended: number; position?: Position }>();
  for (const plan of plans) written.set(plan.request, await writeStream(a, plan, appendId));
  return Promise.all(
    plans.map(async (plan): Promise<AppendResult> => {
      const w = written.get(plan.request) ?? { appended: 0 };
      return {
        stream: plan.request.stream,
        revision: (await a.states.get(plan.request.stream)).revision,
        appended: w.appended,
        duplicates: plan.events.length - w.appended,
        position: w.position,
      };
    }),
  );
}

/**
 * Every request is checked before anything is written: a refused call writes nothing (a writer racing
 * this call can still make a later stream refuse once others are written; a retry completes it).
 */
async function checkAll(states: StreamStates, plans: readonly Planned[]): Promise<void> {
  await eachLimited(plans, PARALLEL_STREAMS, async (plan) => {
    const { stream } = plan.request;
    const known = await states.get(stream);
    if (freshOf(stream, plan.events, known).length === 0 || meetsExpected(plan.expected, known.revision)) return;
    const state = await states.refresh(stream); // what is known may be behind: look again before refusing
    if (freshOf(stream, plan.events, state).length && !meetsExpected(plan.expected, state.revision))
      throw new WrongExpectedRevisionError(stream, plan.expected, state.revision < 0 ? 'no_stream' : state.revision);
  });
}
