import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Alerts (src/alerts, docs/exceptions.md "Alerts"). One stream per alert, `alert-<alertId>`: the alert raised,
 * then every delivery attempt to each of its channels and its outcome. The alert id is derived from the rule,
 * the kind and the subject (a discrepancy, a job run, a day), so an alert is raised once whatever the runs; a
 * delivery recorded as sent is never sent again, after a restart too. No time field here is one the
 * projections' clocks read (their names are not completedAt, requestedAt, detectedAt or failedAt).
 */

export const alertStream = (alertId: string) => `alert-${alertId}`;

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');

export const ALERT_KINDS = [
  'discrepancy',
  'escalation',
  'digest',
  'summary',
  'job_failed',
  'sync_overdue',
  // `recon alerts test`: sent, never recorded
  'test',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export const AlertRaised = defineEvent(
  'AlertRaised',
  1,
  z.object({
    alertId: z.uuid(),
    rule: z.string().min(1),
    kind: z.enum(ALERT_KINDS),
    /** what the alert is about: a discrepancy id, `job@scheduledFor#attempt`, a pos id and time, a local day */
    subject: z.string().min(1),
    title: z.string().min(1).max(300),
    text: z.string().max(20_000),
    /** plain JSON facts for the webhook's receiver (amounts as strings of minor units) */
    facts: z.record(z.string(), z.unknown()),
    /** the channel names to deliver to; none when a summary alert covers this one (flood control) */
    channels: z.array(z.string().min(1)),
    /** the summary alert that was sent instead of this one, when there were too many in one evaluation */
    coveredBy: z.uuid().nullable(),
    raisedAt: isoInstant,
  }),
);

const attemptKey = {
  alertId: z.uuid(),
  channel: z.string().min(1),
  /** 1 for the first attempt of this channel, and so on */
  attempt: z.number().int().min(1),
};

/** Written before the channel is called: an attempt without an outcome (a crash) counts as failed. */
export const AlertDeliveryAttempted = defineEvent(
  'AlertDeliveryAttempted',
  1,
  z.object({ ...attemptKey, attemptedAt: isoInstant }),
);

export const AlertDeliverySent = defineEvent(
  'AlertDeliverySent',
  1,
  z.object({
    ...attemptKey,
    /** the HTTP status or the SMTP answer */
    response: z.string().max(500),
    sentAt: isoInstant,
  }),
);

export const AlertDeliveryFailed = defineEvent(
  'AlertDeliveryFailed',
  1,
  z.object({
    ...attemptKey,
    /** the status or connection error, without the address's secrets */
    error: z.string().max(2000),
    attemptedAt: isoInstant,
    /** when the next attempt is due; null when this was the last one allowed (given up) */
    retryAt: isoInstant.nullable(),
  }),
);
