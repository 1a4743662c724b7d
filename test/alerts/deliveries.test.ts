import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backoffSeconds, deliveryState } from '../../src/alerts/deliveries';
import { newEvent } from '../../src/events/catalog';
import {
  AlertDeliveryAttempted,
  AlertDeliveryFailed,
  AlertDeliverySent,
  AlertRaised,
} from '../../src/events/alert-events';
import type { NewEvent, RecordedEvent } from '../../src/store/types';

/** Where a channel stands from its alert's stream: sent, failed and due again, cut short by a crash, given up. */

const retry = { maxAttempts: 4, baseSeconds: 60, maxSeconds: 300 };
const alertId = randomUUID();

function recorded(events: NewEvent[]): RecordedEvent[] {
  return events.map((e, revision) => ({
    id: e.id,
    stream: `alert-${alertId}`,
    revision,
    position: { commit: 1n, prepare: BigInt(revision) },
    appendId: '1',
    type: e.type,
    version: e.version,
    data: e.data,
    metadata: {},
    recordedAt: new Date(),
  }));
}

const raised = newEvent(AlertRaised, {
  alertId,
  rule: 'r',
  kind: 'discrepancy',
  subject: 's',
  title: 't',
  text: '',
  facts: {},
  channels: ['a', 'b', 'c', 'd'],
  coveredBy: null,
  raisedAt: '2026-03-10T10:00:00.000Z',
});
const attempted = (channel: string, attempt: number, at: string) =>
  newEvent(AlertDeliveryAttempted, { alertId, channel, attempt, attemptedAt: at });
const failed = (channel: string, attempt: number, at: string, retryAt: string | null) =>
  newEvent(AlertDeliveryFailed, { alertId, channel, attempt, error: 'HTTP 503', attemptedAt: at, retryAt });

describe('delivery state', () => {
  it('backs off base × 2^(n−1), capped', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffSeconds(n, retry))).toEqual([60, 120, 240, 300, 300]);
  });

  it('reads each channel of the stream', () => {
    const t = '2026-03-10T10:00:00.000Z';
    const { alert, channels } = deliveryState(
      recorded([
        raised,
        // a: sent on the second attempt
        attempted('a', 1, t),
        failed('a', 1, t, '2026-03-10T10:01:00.000Z'),
        attempted('a', 2, '2026-03-10T10:01:00.000Z'),
        newEvent(AlertDeliverySent, { alertId, channel: 'a', attempt: 2, response: 'HTTP 200', sentAt: t }),
        // b: failed once, due again at its retryAt
        attempted('b', 1, t),
        failed('b', 1, t, '2026-03-10T10:01:00.000Z'),
        // c: the process died while sending (no outcome): failed, due after the backoff from its start
        attempted('c', 1, t),
        attempted('c', 2, '2026-03-10T10:01:00.000Z'),
      ]),
      retry,
    );
    expect(alert?.alertId).toBe(alertId);
    expect(channels).toEqual([
      { channel: 'a', attempts: 2, sent: true, givenUp: false, retryAt: null, lastError: null },
      {
        channel: 'b',
        attempts: 1,
        sent: false,
        givenUp: false,
        retryAt: new Date('2026-03-10T10:01:00.000Z'),
        lastError: 'HTTP 503',
      },
      {
        channel: 'c',
        attempts: 2,
        sent: false,
        givenUp: false,
        retryAt: new Date('2026-03-10T10:03:00.000Z'),
        lastError: 'no outcome recorded (interrupted)',
      },
      // d: never attempted
      { channel: 'd', attempts: 0, sent: false, givenUp: false, retryAt: null, lastError: null },
    ]);
  });

  it('gives up after the last allowed attempt', () => {
    const t = '2026-03-10T10:00:00.000Z';
    const events: NewEvent[] = [raised];
    for (let n = 1; n <= 4; n++) events.push(attempted('a', n, t), failed('a', n, t, n === 4 ? null : t));
    const a = deliveryState(recorded(events), retry).channels[0];
    expect(a).toEqual({ channel: 'a', attempts: 4, sent: false, givenUp: true, retryAt: null, lastError: 'HTTP 503' });
  });
});
