import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAlert } from '../../src/alerts/channels';
import { type AlertDeps, evaluateAlerts } from '../../src/alerts/evaluate';
import { type AlertsConfig, alertsConfigFrom } from '../../src/config/alerts';
import { connect, type Sql } from '../../src/db/connect';
import { createHttpApp } from '../../src/http/http-app';
import { metricsRoute } from '../../src/http/metrics';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { useTestStore } from '../support/db';
import { slackReceiver, smtpReceiver, verifyDocumented } from './receivers';
import { addBreak, clearBreaks, discrepancyTable } from './support';

/**
 * A hostile review of the alerts: two workers evaluating at once (as `recon start` on two processes does),
 * text from the PSP that tries to reach out of its place in a Slack message or an e-mail, and a webhook
 * address whose credentials would be written into a delivery's error.
 */

const fx = useTestStore();
const clock = new Date('2026-03-10T10:00:00Z');
let slack: Awaited<ReturnType<typeof slackReceiver>>;
let smtp: Awaited<ReturnType<typeof smtpReceiver>>;

function configOf(raw: unknown): AlertsConfig {
  const r = alertsConfigFrom(raw, {});
  expect(r.problems).toEqual([]);
  return r.config;
}

const depsOf = (sql: Sql, store: EventStore, config: AlertsConfig, at: Date = clock): AlertDeps => ({
  sql,
  store,
  log: silentLogger,
  config,
  timezone: 'Europe/Kyiv',
  projects: [],
  channelDeps: { mail: { smtpUrl: smtp.url, from: 'recon@example.test' } },
  now: () => at,
});

/**
 * Two stores whose first appendMany each waits for the other's: both workers have read what is raised before
 * either raises, the interleaving a busy database gives now and then, made certain.
 */
function racing(a: EventStore, b: EventStore): [EventStore, EventStore] {
  let arrived = 0;
  let release: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    release = resolve;
  });
  const gate = (s: EventStore): EventStore => {
    let first = true;
    return Object.assign(Object.create(s) as EventStore, {
      async appendMany(requests: Parameters<EventStore['appendMany']>[0]) {
        if (first) {
          first = false;
          if (++arrived === 2) release();
          await together;
        }
        return s.appendMany(requests);
      },
    });
  };
  return [gate(a), gate(b)];
}

/** Another process: its own pool and store on the same database. */
async function otherWorker<T>(fn: (sql: Sql, store: EventStore) => Promise<T>): Promise<T> {
  const sql = connect(fx.db.url, { max: 2 });
  try {
    return await fn(sql, createPostgresEventStore(sql));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const settlementMissing = (subMerchant: string, detectedAt = '2026-03-10T08:00:00Z') => ({
  type: 'settlement_missing',
  values: { expected: '150000' },
  currency: 'UAH',
  detectedAt,
  subMerchant,
});

beforeAll(async () => {
  slack = await slackReceiver();
  smtp = await smtpReceiver();
  await discrepancyTable(fx.db.sql);
});
afterAll(async () => {
  await slack.close();
  await smtp.close();
});

describe('two workers evaluating at once', () => {
  it('raise each alert once and deliver it once; neither evaluation fails', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [{ name: 'concurrent', on: 'discrepancy', escalate: false, channels: ['team'] }],
      maxPerRun: 50,
    });
    for (let i = 0; i < 5; i++) await addBreak(fx.db.sql, settlementMissing(`sm-c${i}`));
    const before = slack.texts.length;
    // two clocks a few milliseconds apart: each worker's AlertRaised carries its own raisedAt
    const results = await otherWorker((sql, store) => {
      const [one, two] = racing(fx.store, store);
      return Promise.allSettled([
        evaluateAlerts(depsOf(fx.db.sql, one, config, new Date('2026-03-10T10:00:00.000Z'))),
        evaluateAlerts(depsOf(sql, two, config, new Date('2026-03-10T10:00:00.007Z'))),
      ]);
    });
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok']);
    const [rows] = await fx.db.sql<{ n: number }[]>`select count(*)::int as n from alerts where rule = 'concurrent'`;
    expect(rows!.n).toBe(5);
    expect(slack.texts.length - before).toBe(5);
  });

  it('a flood seen by both is one summary, sent once', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [{ name: 'flooded', on: 'discrepancy', escalate: false, channels: ['team'] }],
      maxPerRun: 2,
    });
    for (let i = 0; i < 6; i++) await addBreak(fx.db.sql, settlementMissing(`sm-f${i}`));
    const before = slack.texts.length;
    const results = await otherWorker((sql, store) => {
      const [one, two] = racing(fx.store, store);
      return Promise.allSettled([
        evaluateAlerts(depsOf(fx.db.sql, one, config, new Date('2026-03-10T11:00:00.000Z'))),
        evaluateAlerts(depsOf(sql, two, config, new Date('2026-03-10T11:00:00.009Z'))),
      ]);
    });
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok']);
    const summaries = await fx.db.sql`select alert_id from alerts where rule = 'flood-control'`;
    expect(summaries).toHaveLength(1);
    expect(slack.texts.length - before).toBe(1);
  });
});

describe('hostile text from the PSP', () => {
  const hostile = 'sm-9\n*severity low; nothing to do* <!channel> <http://evil.example/|click here> &amp;';

  it('cannot mention everyone, forge a link or add lines in a Slack message', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [{ name: 'hostile-slack', on: 'discrepancy', escalate: false, channels: ['team'] }],
    });
    const id = await addBreak(fx.db.sql, settlementMissing(hostile));
    const before = slack.texts.length;
    await evaluateAlerts(depsOf(fx.db.sql, fx.store, config, new Date('2026-03-10T12:00:00Z')));
    expect(slack.texts.length - before).toBe(1);
    const text = slack.texts.at(-1)!;
    // Slack reads <…> as a mention or a link and & as the start of an entity: escaped, they are shown as typed
    expect(text).not.toMatch(/[<>]/);
    // the PSP's own "&amp;" is shown as typed, not read as an ampersand
    expect(text).toContain('&amp;amp;');
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('&lt;http://evil.example/|click here&gt;');
    // the PSP's line break does not start a line of its own: title, then one line of description
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain(`id ${id}`);
  });

  it('cannot add lines to an e-mail', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { mail: { type: 'email', to: ['finance@example.test'] } },
      rules: [{ name: 'hostile-mail', on: 'discrepancy', escalate: false, channels: ['mail'] }],
    });
    await addBreak(fx.db.sql, settlementMissing(hostile));
    const before = smtp.mails.length;
    await evaluateAlerts(depsOf(fx.db.sql, fx.store, config, new Date('2026-03-10T13:00:00Z')));
    expect(smtp.mails.length - before).toBe(1);
    const body = smtp.mails.at(-1)!.text!;
    expect(body.split('\n').filter((l) => l.startsWith('*severity low'))).toEqual([]);
  });
});

describe('webhook addresses', () => {
  it('refuses a URL carrying credentials, naming the field, not the value (fetch would print it in every error)', () => {
    const r = alertsConfigFrom(
      {
        channels: {
          hook: { type: 'webhook', url: 'env:RECON_HOOK_URL', secret: 'env:RECON_HOOK_SECRET' },
          chat: { type: 'slack', url: 'https://bot:pa55word@chat.example.test/hooks/1' },
        },
      },
      { RECON_HOOK_URL: 'https://ops:hunter22@ops.example.test/recon', RECON_HOOK_SECRET: 'x'.repeat(20) },
    );
    expect(r.problems.sort()).toEqual([
      'alerts.channels.chat.url: a URL must not carry a user name or password',
      'alerts.channels.hook.url: a URL must not carry a user name or password',
    ]);
    expect(r.problems.join('\n')).not.toMatch(/hunter22|pa55word/);
  });
});

describe('the webhook timestamp', () => {
  it('is when the attempt is signed, not when the evaluation began (a slow channel before it does not age it)', async () => {
    await clearBreaks(fx.db.sql);
    const seen: { timestamp: string; raw: string; signature: string }[] = [];
    const slow = createServer((_req, res) => {
      setTimeout(() => res.writeHead(200).end('ok'), 2_500);
    });
    const hook = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          timestamp: String(req.headers['x-recon-timestamp']),
          signature: String(req.headers['x-recon-signature']),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(204).end();
      });
    });
    const urlOf = async (s: Server) => {
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(s.address() as AddressInfo).port}/x`;
    };
    const secret = 'review-secret-0123456789';
    try {
      const r = alertsConfigFrom(
        {
          channels: {
            slow: { type: 'slack', url: await urlOf(slow) },
            hook: { type: 'webhook', url: await urlOf(hook), secret: 'env:REVIEW_SECRET' },
          },
          rules: [{ name: 'slow-first', on: 'discrepancy', escalate: false, channels: ['slow', 'hook'] }],
        },
        { REVIEW_SECRET: secret },
      );
      expect(r.problems).toEqual([]);
      await addBreak(fx.db.sql, settlementMissing('sm-t'));
      const began = new Date('2026-03-10T14:00:00Z');
      const out = await evaluateAlerts(depsOf(fx.db.sql, fx.store, r.config, began));
      expect(out.deliveries.map((d) => [d.channel, d.outcome])).toEqual([
        ['slow', 'sent'],
        ['hook', 'sent'],
      ]);
      expect(seen).toHaveLength(1);
      // the webhook was signed at least the slow channel's 2.5 s after the evaluation began
      expect(Number(seen[0]!.timestamp) - began.getTime() / 1000).toBeGreaterThanOrEqual(2);
      expect(
        verifyDocumented(
          secret,
          { 'x-recon-timestamp': seen[0]!.timestamp, 'x-recon-signature': seen[0]!.signature },
          Buffer.from(seen[0]!.raw),
          Number(seen[0]!.timestamp),
        ),
      ).toBeNull();
    } finally {
      await new Promise<void>((resolve) => slow.close(() => resolve()));
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });
});

describe('flood control across a crash', () => {
  it('a crash while raising a flood never leaves covered alerts to be sent one by one later', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [{ name: 'big-flood', on: 'discrepancy', escalate: false, channels: ['team'] }],
      maxPerRun: 5,
    });
    // more than one append's worth (500 streams): the summary and 499 in the first, 4 in a second
    const rows = Array.from({ length: 503 }, (_, i) => i);
    for (const i of rows) await addBreak(fx.db.sql, settlementMissing(`sm-b${i}`));
    // the process dies at its second append, if it makes one
    let appends = 0;
    const dying = Object.assign(Object.create(fx.store) as EventStore, {
      async appendMany(requests: Parameters<EventStore['appendMany']>[0]) {
        if (++appends === 2) throw new Error('killed');
        return fx.store.appendMany(requests);
      },
    });
    const before = slack.texts.length;
    // (a flood raised in one append has no second one to die at)
    await evaluateAlerts(depsOf(fx.db.sql, dying, config, new Date('2026-03-10T15:00:00Z'))).catch(() => undefined);
    // restarted: whatever was or was not written, the receiver gets one summary and no covered alert
    await evaluateAlerts(depsOf(fx.db.sql, fx.store, config, new Date('2026-03-10T15:05:00Z')));
    const sent = slack.texts.slice(before);
    expect(sent.filter((t) => t.startsWith('*New exception'))).toEqual([]);
    expect(sent.filter((t) => t.includes('new alerts in one evaluation'))).toHaveLength(1);
  });
});

describe('an SMTP server that never answers', () => {
  it('fails the attempt within the channel timeout instead of holding the evaluation for minutes', async () => {
    const silent = createNetServer(() => {
      // accepts the connection and never greets
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const alert = {
        alertId: '00000000-0000-4000-8000-000000000001',
        rule: 'r',
        kind: 'test' as const,
        subject: 's',
        title: 't',
        text: 'x',
        facts: {},
        channels: ['mail'],
        coveredBy: null,
        raisedAt: '2026-03-10T10:00:00.000Z',
      };
      const started = Date.now();
      await expect(
        sendAlert(
          alert,
          { type: 'email', to: ['a@example.test'] },
          { mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'recon@example.test' }, timeoutMs: 1_000 },
          new Date(),
        ),
      ).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.close();
    }
  }, 15_000);
});

describe('GET /metrics without a token', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  it.skipIf(external === undefined)(
    'refuses a peer off the loopback address even when it claims a loopback X-Forwarded-For',
    async () => {
      const app = createHttpApp({
        routes: [
          metricsRoute({
            sql: fx.db.sql,
            store: fx.store,
            timezone: 'Europe/Kyiv',
            token: undefined,
            log: silentLogger,
          }),
        ],
        log: silentLogger,
      });
      const { url } = await app.listen(0, external!);
      try {
        for (const headers of [
          {} as Record<string, string>,
          { 'x-forwarded-for': '127.0.0.1' },
          { forwarded: 'for=127.0.0.1' },
          { 'x-real-ip': '::1' },
        ])
          expect((await fetch(`${url}/metrics`, { headers })).status).toBe(403);
      } finally {
        await app.close();
      }
    },
  );
});

describe('a failed job whose error quotes a secret', () => {
  it('sends and records the error with the secrets in force hidden', async () => {
    await clearBreaks(fx.db.sql);
    const config = configOf({
      channels: { team: { type: 'slack', url: slack.url } },
      rules: [{ name: 'jobs-secret', on: 'job_failed', channels: ['team'] }],
    });
    const password = 'smtp-pa55word-of-the-statements';
    const scheduled = new Date('2026-03-10T16:00:00Z');
    await fx.db
      .sql`insert into job_runs (job, scheduled_for, trigger, status, attempt, worker, started_at, finished_at, error)
      values ('monthly-statements', ${scheduled}, 'schedule', 'failed', 1, 'w1', ${scheduled}, ${scheduled},
              ${`Invalid login: 535 for smtp://recon:${password}@mail.example.test`})`;
    const before = slack.texts.length;
    const r = await evaluateAlerts({
      ...depsOf(fx.db.sql, fx.store, config, new Date('2026-03-10T16:05:00Z')),
      secrets: [password],
    });
    const id = r.raised.find((a) => a.rule === 'jobs-secret')!.alertId;
    const sent = slack.texts.slice(before).join('\n');
    expect(sent).toContain('Invalid login: 535');
    expect(sent).not.toContain(password);
    const stored = JSON.stringify((await fx.store.readStream(`alert-${id}`)).map((e) => e.data));
    expect(stored).toContain('Invalid login: 535');
    expect(stored).not.toContain(password);
  });
});
