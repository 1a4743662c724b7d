import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { type ParsedMail, simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendStatements } from '../../src/export/statements/delivery';
import { type IssueResult, issueStatements, statementRuns } from '../../src/export/statements/issue';
import { ledgerStatementQueries } from '../../src/export/statements/queries';
import { statementFileName } from '../../src/export/statements/workbooks';
import { silentLogger } from '../../src/log';
import { parsePosition } from '../../src/store/types';
import { TZ, useStatementTest } from '../export/support';

/**
 * `recon statements send` e-mailed the sub-merchant its PDF and its workbook, and the workbook ended with the
 * Audit sheet: the cut's event-store position, the figures' sha-256 and every line's event ids, internal words
 * and ids that must not leave the company. The Audit sheet is now finance's own file beside the statement,
 * `<id>-<slug>-<month>-audit.xlsx`, recorded with the run and never attached.
 */

const t = useStatementTest({ pos: 'pos-audit-mail', outPrefix: 'recon-review14-audit-mail-' });
const MONTH = '2025-01';
const work = mkdtempSync(path.join(tmpdir(), 'recon-review14-audit-mail-read-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const mails: ParsedMail[] = [];
let server: SMTPServer;
let url: string;
let issued: IssueResult;

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, cb) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\n');
  await t.observe(t.sale('pa-1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n, { fee: 250n }), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('pa-2', '2025-01-20T10:00:00Z', 'Alpha Shop', 4_000n), '2025-01-21T00:00:00Z');
  issued = await issueStatements(t.deps, { month: MONTH, outDir: t.out });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Every text of a workbook: sheet names, headers and footers, cells, document properties. */
async function workbookText(content: Buffer): Promise<string> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(content as unknown as ArrayBuffer);
  const out: string[] = [wb.title ?? '', wb.subject ?? '', wb.keywords ?? '', wb.description ?? ''];
  for (const ws of wb.worksheets) {
    out.push(ws.name, ws.headerFooter.oddHeader ?? '', ws.headerFooter.oddFooter ?? '');
    ws.eachRow((row) => row.eachCell((c) => out.push(String(c.value))));
  }
  return out.join('\n');
}

const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function pdfText(content: Buffer, name: string): string {
  const file = path.join(work, name);
  writeFileSync(file, content);
  return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
}

/** The event ids behind the statement's lines, as the ledger gives them at the run's cut. */
async function lineEventIds(): Promise<string[]> {
  const queries = ledgerStatementQueries(t.db.sql);
  const ids: string[] = [];
  for (const f of issued.figures)
    for await (const l of queries.lines({
      month: MONTH,
      timezone: TZ,
      atPosition: parsePosition(issued.position),
      subMerchantId: f.subMerchantId,
      currency: f.currency,
    }))
      ids.push(...l.eventIds);
  return ids;
}

describe('review14: the statement e-mail carries nothing internal', () => {
  it('attaches the PDF and the workbook, none of them holding the cut, hashes or event ids', async () => {
    const r = await sendStatements(
      {
        sql: t.db.sql,
        store: t.store,
        log: silentLogger,
        recipientOf: async () => ({ email: 'alpha@example.test', name: 'Alpha Shop' }),
        transport: nodemailer.createTransport(url),
        from: 'statements@marketplace.test',
        now: () => new Date('2025-02-01T09:00:00.000Z'),
      },
      { month: MONTH, outDir: t.out },
    );
    expect(r.sent).toBe(1);
    expect(mails).toHaveLength(1);
    const attachments = mails[0]!.attachments;
    expect(attachments.map((a) => a.filename).sort()).toEqual([
      'sm-a-alpha-shop-2025-01.pdf',
      'sm-a-alpha-shop-2025-01.xlsx',
    ]);
    const eventIds = await lineEventIds();
    expect(eventIds.length).toBeGreaterThanOrEqual(2);
    for (const a of attachments) {
      const text = a.filename!.endsWith('.xlsx')
        ? await workbookText(a.content)
        : hasPdftotext
          ? pdfText(a.content, a.filename!)
          : '';
      expect(text, a.filename).not.toMatch(/event|position|sha-?256|\bcut\b/i);
      expect(text, a.filename).not.toContain(issued.position);
      expect(text, a.filename).not.toContain(issued.figuresSha256);
      for (const id of eventIds) expect(text, a.filename).not.toContain(id);
    }
  });

  it("keeps finance's audit file beside the statement, recorded with the run, with the lines' event ids", async () => {
    const name = statementFileName('sm-a', MONTH, false, 'Alpha Shop', 'audit');
    expect(name).toBe('sm-a-alpha-shop-2025-01-audit.xlsx');
    const file = path.join(t.out, name);
    expect(existsSync(file)).toBe(true);
    const text = await workbookText(readFileSync(file));
    expect(text).toContain(issued.position);
    expect(text).toContain(issued.figuresSha256);
    for (const id of await lineEventIds()) expect(text).toContain(id);
    // recorded with the run like the statement's other files, its sha-256 that of the file on disk
    const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
    const [run] = await statementRuns(t.db.sql, { month: MONTH });
    expect(run!.files.find((f) => f.name === name)).toMatchObject({ sha256: sha, subMerchantId: 'sm-a' });
  });
});
