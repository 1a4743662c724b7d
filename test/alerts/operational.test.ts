import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AlertDeps, evaluateAlerts } from '../../src/alerts/evaluate';
import { listAlerts } from '../../src/alerts/list';
import { type AlertsConfig, alertsConfigFrom } from '../../src/config/alerts';
import { newEvent } from '../../src/events/catalog';
import { SyncWindowCompleted, syncStream } from '../../src/events/ingest-events';
import { silentLogger } from '../../src/log';
import { useTestStore } from '../support/db';
import { slackReceiver } from './receivers';
import { addBreak, discrepancyTable } from './support';

/**
 * The digest once per local day, one summary instead of a flood, a failed job run and a sync overdue: each
 * alerted once, against a Slack-compatible receiver on loopback.
 */

const fx = useTestStore();
let clock = new Date('2026-03-11T04:00:00Z'); // 06:00 in Kyiv (UTC+2 in March)
const at = (iso: string) => {
  clock = new Date(iso);
};
let slack: Awaited<ReturnType<typeof slackReceiver>>;
let config: AlertsConfig;

const deps = (): AlertDeps => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  config,
  timezone: 'Europe/Kyiv',
  projects: [{ name: 'live', posId: 'pos-live' }],
  channelDeps: { mail: undefined },
  now: () => clock,
});

beforeAll(async () => {
  slack = await slackReceiver();
  const r = alertsConfigFrom(
    {
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [
        { name: 'every-break', on: 'discrepancy', escalate: false, channels: ['team'] },
        { name: 'morning', on: 'digest', atHour: 8, channels: ['team'] },
        { name: 'jobs', on: 'job_failed', channels: ['team'] },
        { name: 'syncs', on: 'sync_overdue', withinHours: 30, channels: ['team'] },
      ],
      maxPerRun: 3,
    },
    {},
  );
  expect(r.problems).toEqual([]);
  config = r.config;
  await discrepancyTable(fx.db.sql);
});
afterAll(async () => {
  await slack.close();
});

describe('operational alerts', () => {
  it('a sync never completed is alerted once; one completed within its window is not', async () => {
    const r = await evaluateAlerts(deps());
    expect(r.raised.map((a) => [a.rule, a.kind, a.subject])).toEqual([['syncs', 'sync_overdue', 'pos-live@never']]);
    expect(slack.texts).toEqual([
      '*Sync overdue: live*\nno sync of live (pos-live) completed within 30 h; last completed never',
    ]);
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    await fx.store.append(syncStream('pos-live'), [
      newEvent(SyncWindowCompleted, {
        posId: 'pos-live',
        window: { from: '2026-03-10T00:00:00.000Z', to: '2026-03-11T00:00:00.000Z' },
        reportId: 'r1',
        announcedCount: 0,
        registerRecords: 0,
        periodRecords: 0,
        rejected: 0,
        appended: 0,
        durationMs: 5,
        completedAt: '2026-03-11T03:00:00.000Z',
      }),
    ]);
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    // 31 h later, the lapse after that completion is a new alert
    at('2026-03-12T10:00:00Z');
    expect((await evaluateAlerts(deps())).raised.map((a) => a.subject)).toEqual([
      'pos-live@2026-03-11T03:00:00.000Z',
      // the day's digest too (12:00 in Kyiv)
      '2026-03-12',
    ]);
    slack.texts.length = 0;
  });

  it('a failed job run is alerted once per failed attempt', async () => {
    const scheduled = new Date('2026-03-12T00:30:00Z');
    await fx.db
      .sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at, error)
      values ('nightly-reconciliation', ${scheduled}, 'schedule', 'failed', 1, 'w1', ${scheduled}, ${scheduled}, 'PSP unreachable')`;
    const r = await evaluateAlerts(deps());
    expect(r.raised.map((a) => [a.rule, a.kind, a.subject])).toEqual([
      ['jobs', 'job_failed', 'nightly-reconciliation@2026-03-12T00:30:00.000Z#1'],
    ]);
    expect(slack.texts).toEqual([
      '*Job failed: nightly-reconciliation*\nnightly-reconciliation scheduled for 2026-03-12T00:30:00.000Z failed (attempt 1): PSP unreachable',
    ]);
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    // the retry at the next tick failed too: its own alert
    await fx.db
      .sql`update job_runs set attempt = 2, error = 'PSP unreachable again' where scheduled_for = ${scheduled}`;
    expect((await evaluateAlerts(deps())).raised.map((a) => a.subject)).toEqual([
      'nightly-reconciliation@2026-03-12T00:30:00.000Z#2',
    ]);
    slack.texts.length = 0;
  });

  it('more new alerts than maxPerRun in one evaluation: one summary sent, the others recorded and never sent', async () => {
    at('2026-03-13T04:00:00Z'); // 06:00 in Kyiv: before the digest's hour
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++)
      ids.push(
        await addBreak(fx.db.sql, {
          type: 'settlement_short',
          values: { shortfall: String(i * 1000) },
          currency: 'UAH',
          detectedAt: '2026-03-13T01:00:00Z',
        }),
      );
    const r = await evaluateAlerts(deps());
    expect(r.summary).not.toBeNull();
    expect(r.raised).toHaveLength(6);
    expect(
      r.raised
        .filter((a) => a.coveredBy === r.summary)
        .map((a) => a.subject)
        .sort(),
    ).toEqual([...ids].sort());
    expect(r.deliveries).toEqual([{ alertId: r.summary, channel: 'team', attempt: 1, outcome: 'sent' }]);
    expect(slack.texts).toEqual([
      '*5 new alerts in one evaluation*\n5 alerts were raised at once; they are recorded (recon alerts list) and sent as this one summary.\nevery-break (discrepancy): 5',
    ]);
    at('2026-03-13T05:00:00Z');
    const again = await evaluateAlerts(deps());
    expect({ raised: again.raised, deliveries: again.deliveries }).toEqual({ raised: [], deliveries: [] });
    const listed = await listAlerts({ sql: fx.db.sql, store: fx.store, retry: config.retry }, { limit: 6 });
    expect(listed.filter((a) => a.coveredBy === r.summary)).toHaveLength(5);
    for (const a of listed.filter((x) => x.coveredBy)) expect(a.deliveries).toEqual([]);
    // exactly maxPerRun new ones are sent one by one
    for (let i = 0; i < 3; i++)
      await addBreak(fx.db.sql, {
        type: 'settlement_late',
        values: { received: '1' },
        currency: 'UAH',
        detectedAt: '2026-03-13T02:00:00Z',
      });
    const three = await evaluateAlerts(deps());
    expect([three.summary, three.raised.length, three.deliveries.length]).toEqual([null, 3, 3]);
    slack.texts.length = 0;
  });

  it('the digest goes once per local day, from its hour on', async () => {
    at('2026-03-14T05:59:00Z'); // 07:59 in Kyiv
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    at('2026-03-14T06:00:00Z'); // 08:00
    const r = await evaluateAlerts(deps());
    expect(r.raised.map((a) => [a.rule, a.kind, a.subject])).toEqual([['morning', 'digest', '2026-03-14']]);
    // 8 open: 5 short (1,000…5,000), 3 late (0.01 each) = 150.03 UAH in doubt; all due within their SLA still
    expect(slack.texts).toHaveLength(1);
    expect(slack.texts[0]).toContain('*Exceptions on 2026-03-14: 8 open');
    expect(slack.texts[0]).toContain('Amount in doubt: 150.03 UAH.');
    at('2026-03-14T21:59:00Z'); // 23:59 the same day
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    at('2026-03-14T22:00:00Z'); // 00:00 the next day, before 08:00
    expect((await evaluateAlerts(deps())).raised).toEqual([]);
    at('2026-03-15T07:00:00Z');
    expect((await evaluateAlerts(deps())).raised.map((a) => a.subject)).toEqual(['2026-03-15']);
    expect(slack.texts).toHaveLength(2);
  });
});

describe('the alerts configuration', () => {
  it('names the field of every problem, never a value', () => {
    const r = alertsConfigFrom(
      {
        channels: {
          hook: { type: 'webhook', url: 'https://h.example/x', secret: 'literal-secret-in-the-file-000' },
          slack: { type: 'slack', url: 'env:RECON_UNSET_SLACK_URL' },
        },
        rules: [
          { name: 'a', on: 'discrepancy', match: { minAmount: '12.50' }, channels: ['hook'] },
          { name: 'b', on: 'discrepancy', match: { types: ['no_such_type'] }, channels: ['hook'] },
        ],
      },
      {},
    );
    expect(r.problems).toEqual(
      expect.arrayContaining([
        'alerts.channels.hook.secret: write it as "env:NAME" and set NAME in the environment',
        'alerts.channels.slack.url refers to RECON_UNSET_SLACK_URL, which is not set',
        'alerts.rules.0.match.minAmount: expected minor units as a string of digits',
        expect.stringMatching(/^alerts\.rules\.1\.match\.types\.0: /),
      ]),
    );
    expect(r.problems.join('\n')).not.toContain('literal-secret-in-the-file-000');
    const names = alertsConfigFrom(
      {
        channels: { team: { type: 'email', to: ['a@example.test'] } },
        rules: [
          { name: 'x', on: 'job_failed', channels: ['team'] },
          { name: 'x', on: 'digest', channels: ['ops'] },
        ],
      },
      {},
    );
    expect(names.problems).toEqual([
      'alerts.rules.1.name: x is the name of an earlier rule',
      'alerts.rules.1.channels.0: no channel named ops in alerts.channels',
    ]);
    // a retry sooner than a channel's timeout would let another worker send an attempt still in flight
    const eager = alertsConfigFrom({ retry: { baseSeconds: 0, maxSeconds: 5 } }, {});
    expect(eager.problems.map((p) => p.split(':')[0])).toEqual(['alerts.retry.baseSeconds', 'alerts.retry.maxSeconds']);
  });
});
