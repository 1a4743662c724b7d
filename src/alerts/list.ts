import type { AlertsConfig } from '../config/alerts';
import type { Sql } from '../db/connect';
import { alertStream } from '../events/alert-events';
import type { EventStore } from '../store/types';
import { type ChannelState, deliveryState } from './deliveries';

/** The alerts raised, newest first, each with where its deliveries stand (`recon alerts list`, the console). */

export interface AlertListing {
  readonly alertId: string;
  readonly rule: string;
  readonly kind: string;
  readonly subject: string;
  readonly title: string;
  readonly raisedAt: string;
  /** the summary alert sent instead of this one (flood control) */
  readonly coveredBy: string | null;
  readonly deliveries: readonly ChannelState[];
}

export async function listAlerts(
  deps: { readonly sql: Sql; readonly store: EventStore; readonly retry: AlertsConfig['retry'] },
  opts: { readonly limit?: number; readonly pendingOnly?: boolean } = {},
): Promise<AlertListing[]> {
  const rows = await deps.sql<{ alert_id: string }[]>`
    select alert_id::text from alerts ${opts.pendingOnly ? deps.sql`where pending` : deps.sql``}
    order by raised_at desc, alert_id limit ${opts.limit ?? 100}`;
  const out: AlertListing[] = [];
  for (const r of rows) {
    const { alert, channels } = deliveryState(await deps.store.readStream(alertStream(r.alert_id)), deps.retry);
    if (!alert) continue;
    out.push({
      alertId: alert.alertId,
      rule: alert.rule,
      kind: alert.kind,
      subject: alert.subject,
      title: alert.title,
      raisedAt: alert.raisedAt,
      coveredBy: alert.coveredBy,
      deliveries: channels,
    });
  }
  return out;
}
