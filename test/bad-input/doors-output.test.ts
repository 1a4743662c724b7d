import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { Transporter } from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { directoryRecipients } from '../../src/cli/statements-send';
import { newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { sendStatements } from '../../src/export/statements/delivery';
import { directoryAt } from '../../src/export/statements/header';
import { issueStatements } from '../../src/export/statements/issue';
import { documentText } from '../../src/input-rules';
import { silentLogger } from '../../src/log';
import { useStatementTest } from '../export/support';

/**
 * Defence in depth on output (issue 23): names stored before the directory checked them (CR/LF, overrides,
 * 10,000 characters) reach neither the PDF's title and "Sub-merchant" block nor the e-mail's subject and
 * greeting as they are: one line, no control characters or overrides, at most 200 characters; a long name
 * does not lengthen the PDF.
 */

const t = useStatementTest({ pos: 'pos-doors', outPrefix: 'recon-doors-output-' });

const NAMES: Record<string, string> = {
  'sm-plain': 'Plain Shop',
  'sm-crlf': 'Evil\r\nSub-merchant: Other Ltd',
  'sm-bidi': '\u202Efdp.exe Shop\u202C',
  'sm-long': 'Long name '.repeat(1000).trim(),
};
const SHOWN: Record<string, string> = {
  'sm-plain': 'Plain Shop',
  'sm-crlf': 'Evil Sub-merchant: Other Ltd',
  'sm-bidi': 'fdp.exe Shop',
  'sm-long': `${'Long name '.repeat(20).slice(0, 199).trimEnd()}…`,
};
const BAD = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('documentText', () => {
  it.each([
    ['a\r\nb', 'a b'],
    ['\u202Eevil\u202C', 'evil'],
    ['\u001b[31mred\u001b[0m', '[31mred[0m'],
    ['a\u0000b\u0085c\u007f', 'abc'],
    ['  two   spaces \t tab ', 'two spaces tab'],
    ['x\uD800y', 'xy'],
    ['🎁'.repeat(150), `${'🎁'.repeat(99)}…`],
    ['Квітка ТОВ', 'Квітка ТОВ'],
  ])('%j → %j', (text, shown) => {
    expect(documentText(text)).toBe(shown);
  });
});

describe('statements and e-mails of names stored before the directory checked them', () => {
  it('print each name on one line, without overrides, bounded; a long name adds no page', async () => {
    for (const [id, name] of Object.entries(NAMES))
      await t.store.append(subMerchantStream(id), [
        newEvent(SubMerchantRegistered, { subMerchantId: id, name, reserveHoldDays: 0, email: `${id}@example.test` }),
      ]);
    await t.settle();
    let i = 0;
    for (const name of Object.values(NAMES)) {
      i++;
      // many lines, so that the PDF runs over several pages
      for (let k = 0; k < 40; k++)
        await t.observe(
          t.sale(
            `p-${i}-${k}`,
            `2025-01-${String(2 + (k % 25)).padStart(2, '0')}T10:00:00Z`,
            name,
            10_000n + BigInt(k),
          ),
          '2025-01-28T00:00:00Z',
        );
    }
    await issueStatements(t.deps, { month: '2025-01', outDir: t.out });

    // the header every document takes its name from
    for (const id of Object.keys(NAMES)) {
      const details = await directoryAt(t.store, id, { commit: 2n ** 62n, prepare: 2n ** 62n });
      expect(details.legalName, id).toBe(SHOWN[id]);
    }

    const files = readdirSync(t.out);
    // the statement's own files, not finance's audit file beside them (`…-audit.xlsx`)
    const of = (id: string, ext: string) =>
      path.join(t.out, files.find((f) => f.includes(id) && f.endsWith(ext) && !f.endsWith(`-audit${ext}`))!);
    const pages = (id: string) =>
      readFileSync(of(id, '.pdf'))
        .toString('latin1')
        .match(/\/Type \/Page\b/g)?.length ?? 0;
    expect(pages('sm-plain')).toBeGreaterThan(1);
    for (const id of ['sm-crlf', 'sm-bidi', 'sm-long']) expect(pages(id), id).toBe(pages('sm-plain'));

    // the workbook's title and recipient: the shown name, once, on one line
    for (const id of Object.keys(NAMES)) {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(of(id, '.xlsx'));
      const texts: string[] = [];
      wb.getWorksheet(1)!.eachRow((row) => row.eachCell((c) => void texts.push(String(c.value ?? ''))));
      expect(texts, id).toContain(SHOWN[id]);
      for (const text of texts) expect(text, id).not.toMatch(BAD);
    }

    // the e-mails: subject and greeting on one line each, the message as long as for a plain name
    const sent: Array<{ subject: string; text: string; to: string }> = [];
    const transport = {
      sendMail: async (m: { subject: string; text: string; to: string }) => {
        sent.push(m);
        return {};
      },
    } as unknown as Transporter;
    const r = await sendStatements(
      {
        sql: t.db.sql,
        store: t.store,
        log: silentLogger,
        recipientOf: directoryRecipients(t.store),
        transport,
        from: 'statements@marketplace.test',
        now: () => new Date('2025-02-01T09:00:00Z'),
      },
      { month: '2025-01', outDir: t.out },
    );
    expect(r.sent).toBe(4);
    const plain = sent.find((m) => m.to === 'sm-plain@example.test')!;
    for (const id of Object.keys(NAMES)) {
      const m = sent.find((x) => x.to === `${id}@example.test`)!;
      expect(m.subject, id).toBe(`Payout statement 2025-01 — ${SHOWN[id]}`);
      expect(m.text.split('\n')[0], id).toBe(`Dear ${SHOWN[id]},`);
      expect(m.text.split('\n').length, id).toBe(plain.text.split('\n').length);
      expect(m.subject + m.text, id).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    }
  });
});
