import { newEvent } from '../events/catalog';
import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  SourceRecordRejected,
  WebhookReceived,
  paymentStream,
  rejectionStream,
  type NormalizedPeriodRecord,
  type NormalizedRegisterRecord,
  type NormalizedWebhook,
} from '../events/ingest-events';
import type { AppendRequest, NewEvent } from '../store/types';
import { maskCardNumbers, maskedObservation } from './card-numbers';

/**
 * Builders of the events ingestion appends. Ids come from the event data (posId, the exact raw text
 * and its normalized form, card numbers masked in both: card-numbers.ts): the same record read again is the same id, so a re-append is a no-op,
 * and a record whose content changed is a new observation. Metadata (when and how it was read) is
 * not part of the id. The normalized records come from the parsers of src/psp/parse.ts, already in
 * the schema's shape, so they are not validated a second time (`validated: true`).
 */

export interface WindowRef {
  readonly from: string;
  readonly to: string;
}

export interface SyncObservation {
  readonly source: 'register' | 'period';
  readonly reportId: string | null;
  readonly window: WindowRef;
  readonly observedAt: string;
}

export interface WebhookObservation {
  readonly receivedAt: string;
  readonly remoteAddress: string | null;
}

export type Keyed = { readonly stream: string; readonly event: NewEvent };

const webhookMasked = <T extends { other: Record<string, unknown> }>(raw: string, webhook: T) => {
  const m = maskedObservation(raw, webhook);
  return { raw: m.raw, webhook: m.record };
};

export function registerObserved(
  posId: string,
  raw: string,
  record: NormalizedRegisterRecord,
  meta: SyncObservation,
): Keyed {
  return {
    stream: paymentStream(posId, record.paymentId),
    event: newEvent(
      RegisterRecordObserved,
      { posId, ...maskedObservation(raw, record) },
      { metadata: { ...meta }, validated: true },
    ),
  };
}

export function periodObserved(
  posId: string,
  raw: string,
  record: NormalizedPeriodRecord,
  meta: SyncObservation,
): Keyed {
  return {
    stream: paymentStream(posId, record.paymentId),
    event: newEvent(
      PeriodRecordObserved,
      { posId, ...maskedObservation(raw, record) },
      { metadata: { ...meta }, validated: true },
    ),
  };
}

export function webhookReceived(
  posId: string,
  raw: string,
  webhook: NormalizedWebhook,
  meta: WebhookObservation,
): Keyed {
  return {
    stream: paymentStream(posId, webhook.paymentId),
    event: newEvent(
      WebhookReceived,
      { posId, ...webhookMasked(raw, webhook) },
      { metadata: { source: 'webhook', ...meta }, validated: true },
    ),
  };
}

// PostgreSQL text and jsonb cannot hold U+0000 or a lone surrogate half.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A refused payload is kept for inspection even when it holds characters the database cannot store:
 * those are written as `\uXXXX` text and the event says so (`rawEscaped`), so nothing else is altered.
 */
export function storableRaw(raw: string): { raw: string; rawEscaped?: true } {
  if (!UNSTORABLE.test(raw)) {
    UNSTORABLE.lastIndex = 0;
    return { raw };
  }
  UNSTORABLE.lastIndex = 0;
  return {
    raw: raw.replace(UNSTORABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    rawEscaped: true,
  };
}

export function recordRejected(
  posId: string,
  source: 'register' | 'period' | 'webhook',
  field: string,
  reason: string,
  raw: string,
  meta: Record<string, unknown>,
): Keyed {
  return {
    stream: rejectionStream(posId),
    event: newEvent(
      SourceRecordRejected,
      // the reason quotes the value refused (`unknown method "…"`), the field's path the names it went through
      // (`cards.<card number>`): masked as the raw copy is
      {
        posId,
        source,
        field: maskCardNumbers(field || '(record)'),
        reason: maskCardNumbers(reason),
        ...storableRaw(maskCardNumbers(raw)),
      },
      { metadata: { source, ...meta } },
    ),
  };
}

/** Groups keyed events by stream (first-seen order) for one `appendMany`. */
export function toAppendRequests(items: readonly Keyed[]): AppendRequest[] {
  const byStream = new Map<string, NewEvent[]>();
  for (const { stream, event } of items) {
    const list = byStream.get(stream);
    if (list) list.push(event);
    else byStream.set(stream, [event]);
  }
  return [...byStream].map(([stream, events]) => ({ stream, events, expectedRevision: 'any' as const }));
}
