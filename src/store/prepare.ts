import { sha256Hex, stableStringify } from '../canonical';
import { EventIdConflictError, InvalidEventError } from './errors';
import type { AppendRequest, NewEvent } from './types';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface PreparedEvent {
  readonly stream: string;
  readonly id: string;
  readonly type: string;
  readonly version: number;
  readonly dataJson: string;
  readonly metadataJson: string;
  readonly contentHash: string;
}

/** Content that an event id stands for: type, version and data (metadata is circumstance, not content). */
export function contentHash(e: Pick<NewEvent, 'type' | 'version' | 'data'>): string {
  return sha256Hex(stableStringify({ type: e.type, version: e.version, data: e.data }));
}

/**
 * The same hash from the data's canonical text: `stableStringify({ type, version, data })` puts the keys
 * in the order data, type, version, so the text can be assembled around the data without serialising
 * it again (test/store/prepare.test.ts checks the two agree).
 */
export function contentHashOfCanonical(type: string, version: number, canonicalData: string): string {
  return sha256Hex(`{"data":${canonicalData},"type":${JSON.stringify(type)},"version":${version}}`);
}

/** Largest `version`: the column is a PostgreSQL int4. */
export const MAX_VERSION = 2_147_483_647;

/**
 * Why a stream name or type cannot be stored exactly as given, or undefined when it can. A lone UTF-16
 * surrogate is not Unicode: the driver sends it as U+FFFD, so the event would land in another stream
 * (or under another type) than the one named. NUL is refused by PostgreSQL text (SQLSTATE 22021, 22P05).
 * (With the `u` flag, [\ud800-\udfff] matches only surrogates that are not part of a pair.)
 */
function unstorableText(text: string): string | undefined {
  if (/[\ud800-\udfff]/u.test(text)) return 'is not well-formed Unicode (a lone surrogate)';
  if (text.includes('\0')) return 'contains NUL (U+0000)';
  return undefined;
}

/**
 * Validates and serialises the events of append requests, shared by both backends, before anything is
 * written. Repeats of an id within the same call collapse to one when their content is equal and are
 * refused otherwise. A call that names one stream in two requests is refused: an expected revision and a
 * result are the stream's, so a second request for it has neither a revision to be checked against nor
 * counts of its own (PostgreSQL checked both against the stream as the call found it and reported the
 * stream's totals twice; EventStoreDB, stream by stream, checked the second against the first).
 */
export function prepareAppend(requests: readonly AppendRequest[]): PreparedEvent[] {
  const seen = new Map<string, PreparedEvent>();
  const streams = new Set<string>();
  const out: PreparedEvent[] = [];
  for (const r of requests) {
    checkStreamName(r.stream);
    if (streams.has(r.stream))
      throw new InvalidEventError(
        `stream ${JSON.stringify(r.stream)} is named by more than one request of one call: put its events in one request`,
      );
    streams.add(r.stream);
    for (const e of r.events) {
      const prepared = prepareEvent(r.stream, e);
      const prior = seen.get(prepared.id);
      if (prior) {
        if (prior.stream !== prepared.stream)
          throw new EventIdConflictError(prepared.id, prepared.stream, 'other_stream', prior.stream);
        if (prior.contentHash !== prepared.contentHash)
          throw new EventIdConflictError(prepared.id, prepared.stream, 'different_content', prior.stream);
        continue;
      }
      seen.set(prepared.id, prepared);
      out.push(prepared);
    }
  }
  return out;
}

/** Refuses a stream name the store cannot hold exactly as given. */
export function checkStreamName(stream: string): void {
  if (typeof stream !== 'string' || stream.length === 0 || stream.length > 512)
    throw new InvalidEventError(`invalid stream name ${JSON.stringify(stream)}`);
  const badStream = unstorableText(stream);
  if (badStream) throw new InvalidEventError(`invalid stream name ${JSON.stringify(stream)}: ${badStream}`);
}

/**
 * Validates and serialises one event of a stream whose name was checked (checkStreamName). The bulk append
 * prepares its events one by one with it: a million events are never held together.
 */
export function prepareEvent(stream: string, e: NewEvent): PreparedEvent {
  if (!UUID.test(e.id)) throw new InvalidEventError(`event id must be a UUID, got ${JSON.stringify(e.id)}`);
  if (!e.type || typeof e.type !== 'string') throw new InvalidEventError(`event ${e.id}: type is required`);
  const badType = unstorableText(e.type);
  if (badType) throw new InvalidEventError(`event ${e.id}: type ${JSON.stringify(e.type)} ${badType}`);
  if (!Number.isInteger(e.version) || e.version < 1)
    throw new InvalidEventError(`event ${e.id}: version must be a positive integer`);
  if (e.version > MAX_VERSION)
    throw new InvalidEventError(
      `event ${e.id}: version ${e.version} is above ${MAX_VERSION}, the largest the store holds`,
    );
  if (e.data === undefined) throw new InvalidEventError(`event ${e.id}: data is required`);
  let dataJson: string;
  let metadataJson: string;
  try {
    // Canonical text: stored as the event's data and hashed, so it is serialised only once.
    dataJson = e.canonicalData ?? stableStringify(e.data, true);
    metadataJson = e.metadata == null ? '{}' : JSON.stringify(e.metadata);
  } catch (err) {
    throw new InvalidEventError(`event ${e.id}: data is not plain JSON (${(err as Error).message})`);
  }
  return {
    stream,
    id: e.id.toLowerCase(),
    type: e.type,
    version: e.version,
    dataJson,
    metadataJson,
    contentHash: contentHashOfCanonical(e.type, e.version, dataJson),
  };
}
