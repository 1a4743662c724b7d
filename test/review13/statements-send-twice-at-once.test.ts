import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { reconEnv } from '../../fixtures/psp-env';
import { TZ, useStatementTest } from '../export/support';
import { slowSmtpServer } from './slow-smtp';
import { killAll, spawnRecon } from '../faults/support/processes';

/**
 * Two `recon statements send --month M` at once (two operators, or a cron entry and a person): each planned
 * before the other had recorded anything, both found every statement "to send", and every sub-merchant got its
 * statement twice; the second StatementSent is the same event (its id leaves the time out), so nothing even
 * shows it. "Every sending an event, never twice unless --resend" (README).
 */

const t = useStatementTest({ pos: 'pos-r13-send-twice', outPrefix: 'r13-send-twice-' });
let smtp: Awaited<ReturnType<typeof slowSmtpServer>>;

beforeAll(async () => {
  // a server that takes its time: a sending is in flight long enough to be met
  smtp = await slowSmtpServer(700);
  await t.directory(
    'sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\nsm-b,Beta Store,0,beta@example.test\n',
  );
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await killAll();
  await smtp?.close();
});

describe('recon statements send twice at once', () => {
  it('sends each statement once', { timeout: 120_000 }, async () => {
    const env = reconEnv({
      databaseUrl: t.db.url,
      timezone: TZ,
      extra: { RECON_OUT_DIR: t.out, RECON_SMTP_URL: smtp.url, RECON_MAIL_FROM: 'statements@marketplace.test' },
    });
    const a = spawnRecon(['statements', 'send', '--month', '2025-01'], env);
    const b = spawnRecon(['statements', 'send', '--month', '2025-01'], env);
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    expect(smtp.received.sort()).toEqual(['alpha@example.test', 'beta@example.test']);
    expect([ea.code, eb.code], a.stderr() + b.stderr()).toEqual([0, 0]);
  });
});
