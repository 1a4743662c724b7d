import { newEvent } from '../../src/events/catalog';
import { SyncWindowCompleted, WebhookResendRequested, healStream, syncStream } from '../../src/events/ingest-events';
import type { Keyed } from '../../src/ingest/observations';
import type { Operation } from '../../src/sandbox/model';
import type { Scenario } from '../../src/sandbox/scenario';
import { directoryEvents, operationEvents } from '../ledger/ingest-stream';

/**
 * A realistic ingest stream for the reconciliation projection: the sandbox scenario's directory and
 * operations (register rows per receiver, period records, webhooks; see test/ledger/ingest-stream.ts),
 * plus what sync and healing add around them:
 * - when the operations reach a new UTC day, a `SyncWindowCompleted` of the previous day (completed the
 *   next morning), and a re-sync of the day `resyncAfterDays` earlier (the nightly re-sync of older windows,
 *   past the grace period: the basis of missing_in_report / missing_in_period);
 * - a `WebhookResendRequested` for every final operation whose webhook never came (healing).
 * Lazy: only the current operation is in memory.
 */

const DAY_MS = 86_400_000;

export interface ReconciliationStreamOptions {
  /** re-sync of the window this many days back (default 3) */
  readonly resyncAfterDays?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function syncCompleted(posId: string, dayStart: number, completedAt: number, reportId: string): Keyed {
  return {
    stream: syncStream(posId),
    event: newEvent(SyncWindowCompleted, {
      posId,
      window: { from: iso(dayStart), to: iso(dayStart + DAY_MS) },
      reportId,
      announcedCount: 0,
      registerRecords: 0,
      periodRecords: 0,
      rejected: 0,
      appended: 0,
      durationMs: 1000,
      completedAt: iso(completedAt),
    }),
  };
}

export function* reconciliationEvents(scenario: Scenario, opts: ReconciliationStreamOptions = {}): Generator<Keyed> {
  const back = opts.resyncAfterDays ?? 3;
  yield* directoryEvents(scenario);
  let day: number | null = null;
  let current: Operation | undefined;
  // operationEvents reads only `operations()`: a scenario of the one current operation
  const one = {
    *operations() {
      if (current) yield current;
    },
  } as unknown as Scenario;
  for (const op of scenario.operations()) {
    const opDay = Math.floor(op.at / DAY_MS) * DAY_MS;
    if (day !== null && opDay > day) {
      for (const posId of scenario.posIds) {
        yield syncCompleted(posId, day, day + DAY_MS + 3_600_000, `register-${iso(day).slice(0, 10)}`);
        const old = day - back * DAY_MS;
        yield syncCompleted(
          posId,
          old,
          day + DAY_MS + 2 * 3_600_000,
          `resync-${iso(old).slice(0, 10)}-${iso(day).slice(0, 10)}`,
        );
      }
    }
    if (day === null || opDay > day) day = opDay;
    current = op;
    yield* operationEvents(one);
    if (op.webhook !== 'sent' && (op.status === 'success' || op.status === 'failure')) {
      yield {
        stream: healStream(op.posId),
        event: newEvent(WebhookResendRequested, {
          posId: op.posId,
          orderId: op.orderId,
          paymentId: op.paymentId,
          operation: op.method,
          transactionId: op.transactionId,
          requestedAt: iso(op.at + DAY_MS + 4 * 3_600_000),
          outcome: 'requested',
          detail: null,
        }),
      };
    }
  }
}
