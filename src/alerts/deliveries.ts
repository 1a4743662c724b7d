import type { AlertChannel, AlertsConfig } from '../config/alerts';
import type { Sql } from '../db/connect';
import { dataOf, isEvent, newEvent } from '../events/catalog';
import {
  AlertDeliveryAttempted,
  AlertDeliveryFailed,
  AlertDeliverySent,
  AlertRaised,
  alertStream,
} from '../events/alert-events';
import type { Logger } from '../log';
import type { EventStore, RecordedEvent } from '../store/types';
import { type ChannelDeps, type RaisedAlert, sendAlert } from './channels';

/**
 * Deliveries of the alerts raised, as events of each alert's stream: an attempt is recorded before the channel
 * is called, its outcome after. What the stream says was sent is never sent again, whatever restarts between;
 * a failure is tried again after an exponential backoff, up to the configured number of attempts.
 */

export interface ChannelState {
  readonly channel: string;
  /** attempts recorded (an attempt without an outcome, cut short by a crash, counts as failed) */
  readonly attempts: number;
  readonly sent: boolean;
  /** every allowed attempt failed */
  readonly givenUp: boolean;
  /** when the next attempt is due (null: now, or never when sent or given up) */
  readonly retryAt: Date | null;
  readonly lastError: string | null;
}

/** Seconds to wait after the n-th failed attempt: base × 2^(n−1), at most max. */
export function backoffSeconds(failedAttempt: number, retry: AlertsConfig['retry']): number {
  return Math.min(retry.baseSeconds * 2 ** (failedAttempt - 1), retry.maxSeconds);
}

interface Tally {
  attempts: number;
  sent: boolean;
  lastAttemptAt: Date | null;
  outcomeOf: Map<number, { retryAt: Date | null; error: string } | 'sent'>;
}

function tallyOf(events: readonly RecordedEvent[]): Map<string, Tally> {
  const by = new Map<string, Tally>();
  const get = (ch: string) => {
    let t = by.get(ch);
    if (!t) by.set(ch, (t = { attempts: 0, sent: false, lastAttemptAt: null, outcomeOf: new Map() }));
    return t;
  };
  for (const e of events) {
    if (isEvent(AlertDeliveryAttempted, e)) {
      const d = dataOf(AlertDeliveryAttempted, e);
      const t = get(d.channel);
      t.attempts = Math.max(t.attempts, d.attempt);
      t.lastAttemptAt = new Date(d.attemptedAt);
    } else if (isEvent(AlertDeliverySent, e)) {
      const d = dataOf(AlertDeliverySent, e);
      get(d.channel).sent = true;
      get(d.channel).outcomeOf.set(d.attempt, 'sent');
    } else if (isEvent(AlertDeliveryFailed, e)) {
      const d = dataOf(AlertDeliveryFailed, e);
      get(d.channel).outcomeOf.set(d.attempt, { retryAt: d.retryAt ? new Date(d.retryAt) : null, error: d.error });
    }
  }
  return by;
}

/** The alert of a stream and where each of its channels stands. */
export function deliveryState(
  events: readonly RecordedEvent[],
  retry: AlertsConfig['retry'],
): { alert: RaisedAlert | undefined; channels: ChannelState[] } {
  const raised = events.find((e) => isEvent(AlertRaised, e));
  const alert = raised ? dataOf(AlertRaised, raised) : undefined;
  const tally = tallyOf(events);
  const channels = (alert?.channels ?? []).map((channel): ChannelState => {
    const t = tally.get(channel);
    if (!t || t.attempts === 0)
      return { channel, attempts: 0, sent: false, givenUp: false, retryAt: null, lastError: null };
    const last = t.outcomeOf.get(t.attempts);
    const failed = last === undefined ? { retryAt: null, error: 'no outcome recorded (interrupted)' } : last;
    if (t.sent || failed === 'sent')
      return { channel, attempts: t.attempts, sent: true, givenUp: false, retryAt: null, lastError: null };
    const givenUp = t.attempts >= retry.maxAttempts || (last !== undefined && failed.retryAt === null);
    // an attempt cut short has no retryAt of its own: the backoff from when it started
    const retryAt =
      failed.retryAt ??
      (last === undefined && t.lastAttemptAt
        ? new Date(t.lastAttemptAt.getTime() + backoffSeconds(t.attempts, retry) * 1000)
        : null);
    return {
      channel,
      attempts: t.attempts,
      sent: false,
      givenUp,
      retryAt: givenUp ? null : retryAt,
      lastError: failed.error,
    };
  });
  return { alert, channels };
}

export interface DeliveryDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly config: AlertsConfig;
  readonly channelDeps: ChannelDeps;
}

export interface DeliveryOutcome {
  readonly alertId: string;
  readonly channel: string;
  readonly attempt: number;
  readonly outcome: 'sent' | 'failed' | 'due';
  readonly error?: string;
}

const settled = (c: ChannelState) => c.sent || c.givenUp;
const due = (c: ChannelState, now: Date) => !settled(c) && (c.retryAt === null || c.retryAt.getTime() <= now.getTime());

/** One attempt at one channel: recorded before (claiming it: a second evaluator's append conflicts), then its outcome. */
async function attempt(
  deps: DeliveryDeps,
  a: RaisedAlert,
  c: ChannelState,
  at: { readonly revision: number; readonly now: Date; readonly signedAt: Date },
): Promise<DeliveryOutcome | undefined> {
  const { revision, now } = at;
  const stream = alertStream(a.alertId);
  const n = c.attempts + 1;
  const key = { alertId: a.alertId, channel: c.channel, attempt: n };
  try {
    await deps.store.append(
      stream,
      [newEvent(AlertDeliveryAttempted, { ...key, attemptedAt: now.toISOString() }, { idContent: key })],
      { expectedRevision: revision },
    );
  } catch (e) {
    deps.log.info('alert delivery taken by another evaluation', { alertId: a.alertId, channel: c.channel, error: e });
    return undefined;
  }
  const channel: AlertChannel | undefined = deps.config.channels[c.channel];
  try {
    if (!channel) throw new Error(`no channel named ${c.channel} is configured now`);
    const response = await sendAlert(a, channel, deps.channelDeps, at.signedAt);
    await deps.store.append(stream, [
      newEvent(AlertDeliverySent, { ...key, response, sentAt: new Date().toISOString() }, { idContent: key }),
    ]);
    deps.log.info('alert sent', { alertId: a.alertId, rule: a.rule, channel: c.channel, attempt: n });
    return { ...key, outcome: 'sent' };
  } catch (e) {
    const error = (e instanceof Error ? e.message : String(e)).slice(0, 2000);
    const last = n >= deps.config.retry.maxAttempts;
    const retryAt = last ? null : new Date(now.getTime() + backoffSeconds(n, deps.config.retry) * 1000).toISOString();
    await deps.store.append(stream, [
      newEvent(AlertDeliveryFailed, { ...key, error, attemptedAt: now.toISOString(), retryAt }, { idContent: key }),
    ]);
    deps.log.warn('alert not delivered', { alertId: a.alertId, channel: c.channel, attempt: n, error, retryAt });
    return { ...key, outcome: 'failed', error };
  }
}

/**
 * Every delivery due at `now` of the alerts still pending, made (or, dry, listed); an alert whose channels are
 * all sent or given up stops being pending.
 */
export async function deliverPending(deps: DeliveryDeps, now: Date, dryRun = false): Promise<DeliveryOutcome[]> {
  const pending = await deps.sql<{ alert_id: string }[]>`
    select alert_id::text from alerts where pending order by raised_at, alert_id`;
  const out: DeliveryOutcome[] = [];
  // each webhook is signed at the evaluation's clock moved on by the time spent so far: behind slow channels, a
  // timestamp taken when the evaluation began would age past the receiver's window (the events keep `now`)
  const started = Date.now();
  const attemptTime = () => new Date(now.getTime() + (Date.now() - started));
  for (const { alert_id } of pending) {
    const events = await deps.store.readStream(alertStream(alert_id));
    const { alert, channels } = deliveryState(events, deps.config.retry);
    if (!alert) continue;
    let revision = events.at(-1)!.revision;
    let left = 0;
    for (const c of channels) {
      if (!due(c, now)) {
        if (!settled(c)) left++;
        continue;
      }
      if (dryRun) {
        out.push({ alertId: alert_id, channel: c.channel, attempt: c.attempts + 1, outcome: 'due' });
        continue;
      }
      const o = await attempt(deps, alert, c, { revision, now, signedAt: attemptTime() });
      if (!o) {
        left++;
        continue;
      }
      out.push(o);
      revision += 2;
      if (o.outcome === 'failed' && c.attempts + 1 < deps.config.retry.maxAttempts) left++;
    }
    if (left === 0 && !dryRun) await deps.sql`update alerts set pending = false where alert_id = ${alert_id}::uuid`;
  }
  return out;
}
