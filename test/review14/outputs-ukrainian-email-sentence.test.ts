import type { Transporter } from 'nodemailer';
import { beforeAll, describe, expect, it } from 'vitest';
import { sendStatements } from '../../src/export/statements/delivery';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { useStatementTest } from '../export/support';

/**
 * The statement e-mail in Ukrainian opened "Добрий день!" and went on with a sentence in lower case ("у вкладенні
 * ваша виплатна виписка…"), the English letter's "Dear X, please find…" translated word for word: after an
 * exclamation mark a Ukrainian sentence starts with a capital, and every Ukrainian sub-merchant reads it.
 */

const t = useStatementTest({ pos: 'pos-uk-mail', outPrefix: 'recon-review14-uk-mail-' });

beforeAll(async () => {
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-b,Beta Store,0\n');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

describe('the Ukrainian statement e-mail', () => {
  it('starts each sentence with a capital letter', async () => {
    const sent: string[] = [];
    const transport = {
      sendMail: async (m: { text: string }) => {
        sent.push(m.text);
        return {};
      },
    } as unknown as Transporter;
    await sendStatements(
      {
        sql: t.db.sql,
        store: t.store,
        log: silentLogger,
        recipientOf: async () => ({ email: 'beta@example.test', name: 'Beta Store', language: 'uk' as const }),
        transport,
        from: 'statements@marketplace.test',
        now: () => new Date('2025-02-01T09:00:00.000Z'),
      },
      { month: '2025-01', outDir: t.out },
    );
    expect(sent).toHaveLength(1);
    const text = sent[0]!;
    expect(text).toContain('виплатна виписка за 2025-01');
    // a sentence after "!" or "." (or a blank line) never starts in lower case
    expect(text).not.toMatch(/(?:[!.]\s+|\n\n)\p{Ll}/u);
  });
});
