import { StatementSendFailed } from '../src/events/delivery-events';
import {
  PeriodRecordObserved,
  RegisterCountMismatched,
  RegisterRecordObserved,
  SourceRecordRejected,
  SyncWindowCompleted,
  SyncWindowFailed,
  WebhookReceived,
  WebhookResendRequested,
} from '../src/events/ingest-events';
import { eventTypes } from '../src/projector/handlers';

/**
 * The events whose time moves a read model's clock (src/reconciliation/event-clock.ts `eventTime`: the metadata's
 * observedAt or receivedAt, the data's completedAt, requestedAt, detectedAt or failedAt). The reconciliation,
 * the orders and the payouts judge what came due at the end of every append that moves their clock, so they
 * handle these events even where they read nothing else of them (a statement's failed sending among them).
 * test/projection/handles.test.ts checks that every definition of src/events whose data carries one of those
 * times is listed; the metadata's times are the PSP's observations' and rejections' (src/ingest/observations.ts).
 *
 * Not a projection: it exports no `projection`, so the runner's loader passes it by.
 */
export const CLOCK_EVENTS = eventTypes([
  RegisterRecordObserved,
  PeriodRecordObserved,
  WebhookReceived,
  SourceRecordRejected,
  SyncWindowCompleted,
  RegisterCountMismatched,
  SyncWindowFailed,
  WebhookResendRequested,
  StatementSendFailed,
]);

/** The time fields of an event's data that the clocks read (the event clock's, beside the list for its test). */
export { CLOCK_DATA_FIELDS } from '../src/reconciliation/event-clock';
