import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { issueStatements } from '../../src/export/statements/issue';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';
import { slowSmtpServer } from '../review13/slow-smtp';

/**
 * `recon statements send` for a month whose statements were never issued, or with a --sub-merchant that has no
 * statement in the month (a typo), sent nothing and said "0 sent, 0 failed", exit 0: a scheduled sending run a day
 * before the statements, or for the wrong sub-merchant, looked done. Now it is refused naming the option.
 */

const t = useStatementTest({ pos: 'pos-r15-send-nothing', outPrefix: 'r15-send-nothing-' });
let smtp: Awaited<ReturnType<typeof slowSmtpServer>>;

beforeAll(async () => {
  smtp = await slowSmtpServer(0);
  await t.directory('sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\n');
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await killAll();
  await smtp?.close();
});

const send = (...args: string[]) =>
  runRecon(
    ['statements', 'send', ...args],
    reconEnv({
      databaseUrl: t.db.url,
      timezone: TZ,
      extra: { RECON_OUT_DIR: t.out, RECON_SMTP_URL: smtp.url, RECON_MAIL_FROM: 'statements@marketplace.test' },
    }),
  );

describe('recon statements send with nothing to send from', () => {
  it('a month never issued is refused, naming the month', { timeout: 120_000 }, async () => {
    for (const dry of [[], ['--dry-run']]) {
      const r = await send('--month', '2025-02', ...dry);
      expect(r.code, r.stdout).toBe(2);
      expect(r.stderr).toMatch(/--month: no statements .*2025-02/);
      expect(r.stdout).not.toContain('0 sent');
    }
    expect(smtp.received).toEqual([]);
  });

  it('a sub-merchant without a statement in the month is refused, naming it', { timeout: 120_000 }, async () => {
    const r = await send('--month', '2025-01', '--sub-merchant', 'sm-typo');
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toMatch(/--sub-merchant: .*sm-typo/);
    expect(smtp.received).toEqual([]);
    // the one that has a statement still goes
    const ok = await send('--month', '2025-01', '--sub-merchant', 'sm-a');
    expect(ok.code, ok.stderr).toBe(0);
    expect(smtp.received).toEqual(['alpha@example.test']);
  });
});
