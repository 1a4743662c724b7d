import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { reconEnv } from '../../fixtures/psp-env';
import { TZ, useStatementTest } from '../export/support';
import { slowSmtpServer } from './slow-smtp';
import { killAll, spawnRecon, waitFor } from '../faults/support/processes';

/**
 * SIGTERM (or Ctrl-C) to `recon statements send`: the signal aborted the command's signal, which the sending
 * loop never read; it went on mailing every remaining sub-merchant and exited 0. A supervisor's stop, or an
 * operator's Ctrl-C on seeing the wrong month, sent the whole month anyway. Now it stops after the mail in
 * flight (recorded) and exits 130; the next run sends the rest.
 */

const t = useStatementTest({ pos: 'pos-r13-send-term', outPrefix: 'r13-send-term-' });
let smtp: Awaited<ReturnType<typeof slowSmtpServer>>;

beforeAll(async () => {
  // a server that takes its time: a sending is in flight long enough to be met
  smtp = await slowSmtpServer(1500);
  await t.directory(
    'sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\nsm-b,Beta Store,0,beta@example.test\nsm-c,Gamma,0,gamma@example.test\n',
  );
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await t.observe(t.sale('p3', '2025-01-14T10:00:00Z', 'Gamma', 30_000n), '2025-01-15T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await killAll();
  await smtp?.close();
});

describe('recon statements send stopped by SIGTERM', () => {
  it('stops after the mail in flight and exits 130', { timeout: 120_000 }, async () => {
    const env = reconEnv({
      databaseUrl: t.db.url,
      timezone: TZ,
      extra: { RECON_OUT_DIR: t.out, RECON_SMTP_URL: smtp.url, RECON_MAIL_FROM: 'statements@marketplace.test' },
    });
    const p = spawnRecon(['statements', 'send', '--month', '2025-01'], env);
    await waitFor(() => smtp.received.length === 1, { timeoutMs: 60_000, what: 'the first mail' });
    p.kill('SIGTERM');
    const { code } = await p.exited;
    expect(smtp.received).toEqual(['alpha@example.test']);
    expect(code, p.stderr()).toBe(130);
    // the one sent is recorded: the next run sends the other two only
    const again = spawnRecon(['statements', 'send', '--month', '2025-01'], env);
    expect((await again.exited).code, again.stderr()).toBe(0);
    expect(smtp.received.sort()).toEqual(['alpha@example.test', 'beta@example.test', 'gamma@example.test']);
  });
});
