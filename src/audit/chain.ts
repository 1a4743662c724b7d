import type { z } from 'zod';
import { sha256Hex, stableStringify } from '../canonical';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../events/audit-events';
import type { EventDefinition } from '../events/catalog';
import {
  ExceptionAssigned,
  ExceptionCommented,
  ExceptionDecisionApproved,
  ExceptionDecisionProposed,
  ExceptionDecisionRejected,
  ExceptionReopened,
  ExceptionResolvedByHand,
} from '../events/exception-events';
import { PayeeAccountConfirmed } from '../events/ledger-events';
import {
  PayoutRunApproved,
  PayoutRunCancelled,
  PayoutRunDrafted,
  PayoutRunFileTaken,
  PayoutRunSent,
  PayoutRunUnpaidReleased,
} from '../events/payout-run-events';
import { UserAdded, UserRevoked, UserTokenRotated } from '../events/people-events';
import type { RecordedEvent } from '../store/types';

/**
 * The audit journal's rules (docs/audit.md): which events are people's actions, who acted and when, the
 * hash of an event's content and the chain over them. Shared by the read model (projections/audit.ts) and
 * `recon audit verify`, so both compute exactly the same thing.
 */

type AnyDefinition = EventDefinition<string, z.ZodType>;

/** Each people's action, with the fields of its data naming the person and the time. */
const ACTIONS: ReadonlyArray<readonly [AnyDefinition, by: string, at: string]> = [
  [DiscrepancyAccepted, 'acceptedBy', 'acceptedAt'],
  [DiscrepancyAcceptanceRevoked, 'revokedBy', 'revokedAt'],
  [ExceptionAssigned, 'by', 'at'],
  [ExceptionCommented, 'by', 'at'],
  [ExceptionResolvedByHand, 'by', 'at'],
  [ExceptionDecisionProposed, 'by', 'at'],
  [ExceptionDecisionApproved, 'by', 'at'],
  [ExceptionDecisionRejected, 'by', 'at'],
  [ExceptionReopened, 'by', 'at'],
  [PayoutRunDrafted, 'draftedBy', 'draftedAt'],
  [PayoutRunApproved, 'approvedBy', 'approvedAt'],
  [PayoutRunSent, 'sentBy', 'sentAt'],
  [PayoutRunFileTaken, 'takenBy', 'takenAt'],
  [PayoutRunCancelled, 'cancelledBy', 'cancelledAt'],
  [PayoutRunUnpaidReleased, 'releasedBy', 'releasedAt'],
  [PayeeAccountConfirmed, 'confirmedBy', 'confirmedAt'],
  [UserAdded, 'addedBy', 'addedAt'],
  [UserTokenRotated, 'rotatedBy', 'rotatedAt'],
  [UserRevoked, 'revokedBy', 'revokedAt'],
];

/** The definitions of the people's actions: what the journal's projection handles. */
export const AUDITED_EVENTS = ACTIONS.map(([def]) => def);

const FIELDS = new Map(ACTIONS.map(([def, by, at]) => [def.type, { by, at }]));

/**
 * Is it a people's action? By type, whatever the version: a later version of a decision is still a decision
 * (the runner hands a projection every version of the types it handles).
 */
export const isAudited = (e: Pick<RecordedEvent, 'type'>): boolean => FIELDS.has(e.type);

const field = (e: RecordedEvent, name: string | undefined): unknown =>
  name === undefined ? undefined : (e.data as Record<string, unknown> | null)?.[name];

/** The person the event names (null when its data names none: a malformed event is journaled all the same). */
export function actorOf(e: RecordedEvent): string | null {
  const by = field(e, FIELDS.get(e.type)?.by);
  return typeof by === 'string' ? by : null;
}

/** When the person acted, as the event says; when it says nothing readable, when the store recorded it. */
export function actedAt(e: RecordedEvent): string {
  const at = field(e, FIELDS.get(e.type)?.at);
  const t = typeof at === 'string' ? Date.parse(at) : Number.NaN;
  return Number.isFinite(t) ? new Date(t).toISOString() : e.recordedAt.toISOString();
}

/**
 * SHA-256 of the event's canonical content: everything the store holds of it but its position (the journal
 * keeps that beside it, and the chain's order binds it): id, stream and revision, type and version, data,
 * metadata and the time recorded. Keys sorted at every level (src/canonical.ts), so the same stored event
 * always gives the same hash, whichever backend or reader.
 */
export function eventHash(e: RecordedEvent): string {
  return sha256Hex(
    stableStringify({
      id: e.id.toLowerCase(),
      stream: e.stream,
      revision: e.revision,
      type: e.type,
      version: e.version,
      data: e.data,
      metadata: e.metadata,
      recordedAt: e.recordedAt.toISOString(),
    }),
  );
}

/** The chain before the first entry. */
export const GENESIS = '';

/** chain(n) = sha256(chain(n-1) || hash(n)), both as lower-case hex text; chain(0) is empty. */
export function nextChain(previous: string, hash: string): string {
  return sha256Hex(previous + hash);
}

/** A journal entry: one people's action at its place in the log. */
export interface JournalEntry {
  readonly seq: bigint;
  readonly commit: bigint;
  readonly prepare: bigint;
  readonly eventId: string;
  readonly type: string;
  readonly stream: string;
  readonly actor: string | null;
  readonly at: string;
  readonly eventHash: string;
  readonly chain: string;
}

/** The entry an event makes after the entry `seq - 1` whose chain is `previous`. */
export function entryOf(e: RecordedEvent, seq: bigint, previous: string): JournalEntry {
  const hash = eventHash(e);
  return {
    seq,
    commit: e.position.commit,
    prepare: e.position.prepare,
    eventId: e.id.toLowerCase(),
    type: e.type,
    stream: e.stream,
    actor: actorOf(e),
    at: actedAt(e),
    eventHash: hash,
    chain: nextChain(previous, hash),
  };
}
