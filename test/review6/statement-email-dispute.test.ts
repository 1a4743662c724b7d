import type { Transporter } from 'nodemailer';
import { beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_STATEMENTS_CONFIG } from '../../src/config/statements';
import { sendStatements } from '../../src/export/statements/delivery';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { useStatementTest } from '../export/support';

/**
 * Review 6: the statement prints the marketplace's own dispute terms (RECON_STATEMENT_DISPUTE, recorded with
 * the month's first run), but the e-mail that carries it told every sub-merchant to "reply to this message
 * within 30 days", whatever the terms: two documents leaving the company that disagree on how long a figure
 * may be disputed. The e-mail now gives the terms the statement was issued with (its fixed sentence only
 * when none was set).
 */

const t = useStatementTest({ pos: 'pos-dispute', outPrefix: 'recon-review6-dispute-' });
const TERMS = 'Write to disputes@marketplace.test within 14 days of the issue date to dispute a figure.';

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\nsm-b,Beta Store,0\n');
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await issueStatements(
    { ...t.deps, statements: { ...EMPTY_STATEMENTS_CONFIG, dispute: TERMS } },
    { month: '2025-01', outDir: t.out },
  );
});

describe('review6: the statement e-mail and the dispute terms', () => {
  it('each e-mail gives the terms the statement was issued with, in either language', async () => {
    const sent: Array<{ to: string; text: string }> = [];
    const transport = {
      sendMail: async (m: { to: string; text: string }) => {
        sent.push({ to: m.to, text: m.text });
        return {};
      },
    } as unknown as Transporter;
    const r = await sendStatements(
      {
        sql: t.db.sql,
        store: t.store,
        log: silentLogger,
        recipientOf: async (id: string) =>
          id === 'sm-a'
            ? { email: 'alpha@example.test', name: 'Alpha Shop' }
            : { email: 'beta@example.test', name: 'Beta Store', language: 'uk' as const },
        transport,
        from: 'statements@marketplace.test',
        now: () => new Date('2025-02-01T09:00:00.000Z'),
      },
      { month: '2025-01', outDir: t.out },
    );
    expect(r.sent).toBe(2);
    expect(sent).toHaveLength(2);
    for (const m of sent) {
      expect(m.text).toContain(TERMS);
      expect(m.text).not.toMatch(/30 days|30 днів/);
    }
  });
});
