import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAlert } from '../../src/alerts/channels';
import { type AlertDeps, evaluateAlerts } from '../../src/alerts/evaluate';
import { listAlerts } from '../../src/alerts/list';
import { type AlertsConfig, alertsConfigFrom } from '../../src/config/alerts';
import { connect, type Sql } from '../../src/db/connect';
import { dataOf, isEvent } from '../../src/events/catalog';
import { AlertDeliveryFailed, AlertDeliverySent, AlertRaised, alertStream } from '../../src/events/alert-events';
import { dueAt } from '../../src/exceptions/severity';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { useTestStore } from '../support/db';
import { slackReceiver, smtpReceiver, webhookReceiver } from './receivers';
import { addBreak, discrepancyTable } from './support';

/**
 * Alerts against real servers on loopback: a signed webhook checked by a receiver written from the docs, a
 * Slack-compatible webhook, SMTP. Once per exception per rule, escalation once past the due date, no re-send
 * after a restart, a failed delivery retried after its backoff and then never again.
 */

const SECRET = 'shared-secret-of-the-ops-hook-0123';
const fx = useTestStore();
let clock = new Date('2026-03-10T10:00:00Z');
const at = (iso: string) => {
  clock = new Date(iso);
};
const plus = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let slack: Awaited<ReturnType<typeof slackReceiver>>;
let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let config: AlertsConfig;

function configOf(raw: unknown): AlertsConfig {
  const r = alertsConfigFrom(raw, { RECON_TEST_ALERT_SECRET: SECRET, RECON_TEST_SLACK: slack.url });
  expect(r.problems).toEqual([]);
  return r.config;
}

const depsOf = (sql: Sql, store: EventStore, c: AlertsConfig = config): AlertDeps => ({
  sql,
  store,
  log: silentLogger,
  config: c,
  timezone: 'Europe/Kyiv',
  projects: [],
  channelDeps: { mail: { smtpUrl: smtp.url, from: 'recon@example.test' } },
  now: () => clock,
});
const deps = () => depsOf(fx.db.sql, fx.store);

/** A new process's state: its own connection pool and event store on the same database. */
async function restarted<T>(fn: (d: AlertDeps) => Promise<T>): Promise<T> {
  const sql = connect(fx.db.url, { max: 2 });
  try {
    return await fn(depsOf(sql, createPostgresEventStore(sql)));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function streamOf(alertId: string) {
  return fx.store.readStream(alertStream(alertId));
}

beforeAll(async () => {
  hook = await webhookReceiver({ secret: SECRET, clock: () => Math.floor(clock.getTime() / 1000) });
  slack = await slackReceiver();
  smtp = await smtpReceiver();
  config = configOf({
    channels: {
      'ops-hook': { type: 'webhook', url: hook.url, secret: 'env:RECON_TEST_ALERT_SECRET' },
      'finance-slack': { type: 'slack', url: 'env:RECON_TEST_SLACK' },
      'finance-mail': { type: 'email', to: ['finance@example.test', 'lead@example.test'] },
    },
    rules: [
      {
        name: 'big-settlements',
        on: 'discrepancy',
        match: { types: ['settlement_missing', 'settlement_short'], minAmount: '100000', currency: 'UAH' },
        channels: ['ops-hook', 'finance-slack', 'finance-mail'],
      },
    ],
    retry: { maxAttempts: 3, baseSeconds: 60, maxSeconds: 600 },
  });
  await discrepancyTable(fx.db.sql);
});
afterAll(async () => {
  await hook.close();
  await slack.close();
  await smtp.close();
});

describe('alerts on exceptions', () => {
  let missing: string;

  it('raises an alert for a new matching exception once and delivers it by every channel', async () => {
    missing = await addBreak(fx.db.sql, {
      type: 'settlement_missing',
      values: { expected: '150000' },
      currency: 'UAH',
      detectedAt: '2026-03-10T08:00:00Z',
      subMerchant: 'sm-1',
    });
    // below the minimum, another type, another currency: no alert
    await addBreak(fx.db.sql, {
      type: 'settlement_short',
      values: { shortfall: '50000' },
      currency: 'UAH',
      detectedAt: '2026-03-10T08:00:00Z',
    });
    await addBreak(fx.db.sql, {
      type: 'settlement_unexpected',
      values: { amount: '900000' },
      currency: 'UAH',
      detectedAt: '2026-03-10T08:00:00Z',
    });
    await addBreak(fx.db.sql, {
      type: 'settlement_missing',
      values: { expected: '900000' },
      currency: 'EUR',
      detectedAt: '2026-03-10T08:00:00Z',
    });

    const r = await evaluateAlerts(deps());
    expect(r.raised.map((a) => [a.rule, a.kind, a.subject])).toEqual([['big-settlements', 'discrepancy', missing]]);
    const id = r.raised[0]!.alertId;
    expect(r.deliveries.map((d) => [d.channel, d.attempt, d.outcome]).sort()).toEqual([
      ['finance-mail', 1, 'sent'],
      ['finance-slack', 1, 'sent'],
      ['ops-hook', 1, 'sent'],
    ]);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]).toMatchObject({ alertId: id, verified: true, refusedBecause: null });
    expect(hook.received[0]!.body).toMatchObject({
      alertId: id,
      rule: 'big-settlements',
      kind: 'discrepancy',
      subject: missing,
      facts: { discrepancyId: missing, type: 'settlement_missing', currency: 'UAH', amountInDoubt: '150000' },
    });
    expect(slack.texts).toHaveLength(1);
    expect(slack.texts[0]).toContain('1,500.00 UAH');
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]!.subject).toBe('[recon] New exception: settlement missing');
    expect(smtp.mails[0]!.messageId).toBe(`<alert-${id}@example.test>`);
    expect((smtp.mails[0]!.to as { value: { address: string }[] }).value.map((v) => v.address)).toEqual([
      'finance@example.test',
      'lead@example.test',
    ]);

    plus(5 * 60_000);
    const again = await evaluateAlerts(deps());
    expect({ raised: again.raised, deliveries: again.deliveries }).toEqual({ raised: [], deliveries: [] });
    expect([hook.received.length, slack.texts.length, smtp.mails.length]).toEqual([1, 1, 1]);
    expect((await streamOf(id)).map((e) => e.type)).toEqual([
      'AlertRaised',
      ...['AlertDeliveryAttempted', 'AlertDeliverySent'],
      ...['AlertDeliveryAttempted', 'AlertDeliverySent'],
      ...['AlertDeliveryAttempted', 'AlertDeliverySent'],
    ]);
  });

  it('after a restart, sends nothing that was sent', async () => {
    plus(60 * 60_000);
    const r = await restarted((d) => evaluateAlerts(d));
    expect({ raised: r.raised, deliveries: r.deliveries }).toEqual({ raised: [], deliveries: [] });
    expect([hook.received.length, slack.texts.length, smtp.mails.length]).toEqual([1, 1, 1]);
  });

  it('escalates once when the exception is still open past its due date', async () => {
    const due = dueAt({
      type: 'settlement_missing',
      values: { expected: '150000' },
      currency: 'UAH',
      detected_at: '2026-03-10T08:00:00Z',
    })!;
    at(new Date(due.getTime() - 60_000).toISOString());
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    at(new Date(due.getTime() + 60_000).toISOString());
    const r = await evaluateAlerts(deps());
    expect(r.raised.map((a) => [a.kind, a.subject])).toEqual([['escalation', missing]]);
    expect(hook.received.at(-1)!.body).toMatchObject({
      kind: 'escalation',
      title: 'Exception overdue: settlement missing',
    });
    expect(hook.received.at(-1)!.verified).toBe(true);
    plus(3 * 3_600_000);
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    expect(hook.received.filter((h) => h.body.kind === 'escalation')).toHaveLength(1);
  });

  it('tries a failed delivery again after its backoff, after a restart too, and then never again', async () => {
    const before = hook.received.length;
    hook.failNext = 1;
    const second = await addBreak(fx.db.sql, {
      type: 'settlement_short',
      values: { shortfall: '250000' },
      currency: 'UAH',
      detectedAt: clock.toISOString(),
    });
    const first = await evaluateAlerts(deps());
    expect(first.raised.map((a) => a.subject)).toEqual([second]);
    const id = first.raised[0]!.alertId;
    expect(first.deliveries.find((d) => d.channel === 'ops-hook')).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      error: 'HTTP 500',
    });
    const failed = (await streamOf(id))
      .filter((e) => isEvent(AlertDeliveryFailed, e))
      .map((e) => dataOf(AlertDeliveryFailed, e));
    expect(failed).toEqual([
      expect.objectContaining({
        channel: 'ops-hook',
        attempt: 1,
        error: 'HTTP 500',
        retryAt: new Date(clock.getTime() + 60_000).toISOString(),
      }),
    ]);
    const [listed] = await listAlerts({ sql: fx.db.sql, store: fx.store, retry: config.retry }, { pendingOnly: true });
    expect(listed!.deliveries.find((c) => c.channel === 'ops-hook')).toMatchObject({
      attempts: 1,
      sent: false,
      givenUp: false,
    });

    plus(30_000); // before the backoff ends: nothing
    expect((await evaluateAlerts(deps())).deliveries).toEqual([]);
    plus(31_000);
    const retried = await restarted((d) => evaluateAlerts(d));
    expect(retried.deliveries).toEqual([{ alertId: id, channel: 'ops-hook', attempt: 2, outcome: 'sent' }]);
    expect(hook.received.slice(before).map((h) => [h.alertId, h.verified])).toEqual([[id, true]]);
    const sent = (await streamOf(id))
      .filter((e) => isEvent(AlertDeliverySent, e))
      .map((e) => dataOf(AlertDeliverySent, e));
    expect(sent.map((s) => [s.channel, s.attempt]).sort()).toEqual([
      ['finance-mail', 1],
      ['finance-slack', 1],
      ['ops-hook', 2],
    ]);
    plus(3_600_000);
    expect((await restarted((d) => evaluateAlerts(d))).deliveries).toEqual([]);
    expect(await listAlerts({ sql: fx.db.sql, store: fx.store, retry: config.retry }, { pendingOnly: true })).toEqual(
      [],
    );
  });

  it('gives a channel up after the configured attempts, waiting base × 2^(n−1) between them', async () => {
    const bounded = configOf({
      channels: { 'ops-hook': { type: 'webhook', url: hook.url, secret: 'env:RECON_TEST_ALERT_SECRET' } },
      rules: [
        {
          name: 'bounded',
          on: 'discrepancy',
          match: { types: ['settlement_short'] },
          escalate: false,
          channels: ['ops-hook'],
        },
      ],
      retry: { maxAttempts: 3, baseSeconds: 10, maxSeconds: 15 },
    });
    const d = () => depsOf(fx.db.sql, fx.store, bounded);
    hook.failNext = 100;
    const r = await evaluateAlerts(d());
    // both open settlement_short exceptions match this rule
    expect(r.raised).toHaveLength(2);
    for (const wait of [10_000, 15_000]) {
      plus(wait - 1000);
      expect((await evaluateAlerts(d())).deliveries).toEqual([]);
      plus(1000);
      const n = await evaluateAlerts(d());
      expect(n.deliveries.map((x) => x.outcome)).toEqual(['failed', 'failed']);
    }
    plus(3_600_000);
    expect((await evaluateAlerts(d())).deliveries).toEqual([]);
    const listed = await listAlerts({ sql: fx.db.sql, store: fx.store, retry: bounded.retry }, { limit: 2 });
    for (const a of listed)
      expect(a.deliveries).toEqual([
        expect.objectContaining({ attempts: 3, givenUp: true, sent: false, retryAt: null, lastError: 'HTTP 500' }),
      ]);
    hook.failNext = 0;
  });

  it('a receiver following the docs refuses a request signed with another secret', async () => {
    const raised = (
      await streamOf((await listAlerts({ sql: fx.db.sql, store: fx.store, retry: config.retry }))[0]!.alertId)
    ).find((e) => isEvent(AlertRaised, e))!;
    const wrong = { type: 'webhook' as const, url: hook.url, secret: 'another-secret-entirely-0000' };
    await expect(sendAlert(dataOf(AlertRaised, raised), wrong, { mail: undefined }, clock)).rejects.toThrow('HTTP 401');
    expect(hook.received.at(-1)).toMatchObject({ verified: false, refusedBecause: 'signature differs' });
    // and one signed too long ago
    await expect(
      sendAlert(
        dataOf(AlertRaised, raised),
        { ...wrong, secret: SECRET },
        { mail: undefined },
        new Date(clock.getTime() - 600_000),
      ),
    ).rejects.toThrow('HTTP 401');
    expect(hook.received.at(-1)!.refusedBecause).toBe('timestamp too far from the clock');
  });
});
