import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../events/audit-events';
import { newEvent } from '../events/catalog';
import { isStoreError } from '../store/errors';
import type { EventStore, RecordedEvent } from '../store/types';
import { ExceptionRefused } from './errors';

/** The DiscrepancyAccepted event in force on a discrepancy's stream (the last one not revoked), or null. */
export function acceptanceInForce(events: readonly RecordedEvent[]): string | null {
  let inForce: string | null = null;
  for (const e of events) {
    if (e.type === DiscrepancyAccepted.type) inForce = e.id;
    else if (e.type === DiscrepancyAcceptanceRevoked.type && (e.data as { acceptance?: string }).acceptance === inForce)
      inForce = null;
  }
  return inForce;
}

/**
 * Takes back the decision in force on a discrepancy: appends DiscrepancyAcceptanceRevoked to
 * `discrepancy-<id>` at the revision read, so a revocation and another decision made at once cannot both
 * land. The legs' read models open the discrepancy again and hold its money again (docs/exceptions.md).
 */
export async function revokeAcceptance(
  store: EventStore,
  req: { discrepancyId: string; reason: string; by: string; at: Date },
): Promise<{ eventId: string; acceptance: string }> {
  const events = await store.readStream(discrepancyStream(req.discrepancyId));
  const acceptance = acceptanceInForce(events);
  if (acceptance === null)
    throw new ExceptionRefused('CONFLICT', 'id', `discrepancy ${req.discrepancyId} has no decision in force to revoke`);
  const event = newEvent(DiscrepancyAcceptanceRevoked, {
    discrepancyId: req.discrepancyId,
    acceptance,
    reason: req.reason,
    revokedBy: req.by,
    revokedAt: req.at.toISOString(),
  });
  try {
    await store.append(discrepancyStream(req.discrepancyId), [event], { expectedRevision: events.at(-1)!.revision });
  } catch (e) {
    if (isStoreError(e, 'WRONG_EXPECTED_REVISION'))
      throw new ExceptionRefused(
        'CONFLICT',
        'id',
        `discrepancy ${req.discrepancyId}: its decision changed meanwhile; look again`,
      );
    throw e;
  }
  return { eventId: event.id, acceptance };
}
