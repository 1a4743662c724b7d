import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementSendFailed, StatementSent, statementDeliveryStream } from '../../src/events/delivery-events';
import { planDelivery, type Recipient, senderDomain, sendStatements } from '../../src/export/statements/delivery';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { directoryRecipients } from '../../src/cli/statements-send';
import { useStatementTest } from './support';

/**
 * Statements e-mailed over SMTP to a real SMTP server (smtp-server) listening on loopback, each received
 * message parsed back (mailparser) and its attachments compared with the issued files byte for byte.
 */

const t = useStatementTest({ pos: 'pos-mail', outPrefix: 'recon-delivery-' });

interface Received {
  from: string;
  to: string[];
  mail: ParsedMail;
}
const received: Received[] = [];
/** addresses the server refuses at RCPT TO, to make a sending fail */
const refused = new Set<string>();
let server: SMTPServer;
let url: string;

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: false,
    disabledCommands: ['STARTTLS'],
    onAuth(auth, _session, cb) {
      if (auth.username === 'recon' && auth.password === 's3cret-pass') cb(null, { user: 'recon' });
      else cb(new Error('invalid credentials'));
    },
    onRcptTo(address, _session, cb) {
      if (refused.has(address.address)) cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      else cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            mail,
          });
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  url = `smtp://recon:s3cret-pass@127.0.0.1:${port}`;

  await t.directory('sub_merchant_id,name,reserve_hold_days\nsm-a,Alpha Shop,0\nsm-b,Beta Store,0\n');
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const addresses: Record<string, Recipient> = {
  'sm-a': { email: 'alpha@example.test', name: 'Alpha Shop' },
  'sm-b': { email: 'beta@example.test', name: 'Beta Store', language: 'uk' },
};

const deps = () => ({
  sql: t.db.sql,
  store: t.store,
  log: silentLogger,
  recipientOf: async (id: string) => addresses[id],
  transport: nodemailer.createTransport(url, { tls: { rejectUnauthorized: false } }),
  from: 'statements@marketplace.test',
  now: () => new Date('2025-02-01T09:00:00.000Z'),
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('statements send', () => {
  it('a dry run lists what would go and sends nothing', async () => {
    const plan = await planDelivery(deps(), { month: '2025-01', outDir: t.out });
    expect(plan.map((p) => [p.subMerchantId, p.to, p.status])).toEqual([
      ['sm-a', 'alpha@example.test', 'send'],
      ['sm-b', 'beta@example.test', 'send'],
    ]);
    // each sub-merchant gets its workbook and its PDF
    expect(plan.every((p) => p.files.map((f) => f.name.slice(-4)).join() === '.pdf,xlsx')).toBe(true);
    expect(received).toHaveLength(0);
  });

  it('sends each sub-merchant its files, read back from the server equal to the issued files', async () => {
    refused.add('beta@example.test');
    const first = await sendStatements(deps(), { month: '2025-01', outDir: t.out });
    expect([first.sent, first.failed]).toEqual([1, 1]);
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.to).toEqual(['alpha@example.test']);
    expect(got.mail.subject).toBe('Payout statement 2025-01 — Alpha Shop');
    const plan = first.planned.find((p) => p.subMerchantId === 'sm-a')!;
    expect(got.mail.attachments.map((a) => [a.filename, sha(a.content)])).toEqual(
      plan.files.map((f) => [f.name, sha(readFileSync(path.join(t.out, f.name)))]),
    );
    // the sender's domain, not the internal tool's name: the header leaves the company
    expect(got.mail.messageId).toMatch(/^<statement-[0-9a-f]{32}@marketplace\.test>$/);
    // the failure is recorded with the server's answer and never the SMTP password
    const events = await t.store.readStream(statementDeliveryStream('2025-01'));
    const failed = events.filter((e) => e.type === StatementSendFailed.type);
    expect(failed).toHaveLength(1);
    const data = StatementSendFailed.schema.parse(failed[0]!.data);
    expect([data.subMerchantId, data.attempt]).toEqual(['sm-b', 1]);
    expect(data.error).toMatch(/550/);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain('s3cret-pass');
  });

  it('never sends the same statement twice, retries the failed one, and resends only when asked', async () => {
    refused.clear();
    const second = await sendStatements(deps(), { month: '2025-01', outDir: t.out });
    expect([second.sent, second.failed]).toEqual([1, 0]);
    expect(second.planned.map((p) => [p.subMerchantId, p.status, p.failures])).toEqual([
      ['sm-a', 'sent-before', 0],
      ['sm-b', 'send', 1],
    ]);
    expect(received.map((r) => r.to[0])).toEqual(['alpha@example.test', 'beta@example.test']);
    // in the sub-merchant's language
    expect(received[1]!.mail.subject).toBe('Виплатна виписка 2025-01 — Beta Store');
    expect(received[1]!.mail.text).toContain('У вкладенні ваша виплатна виписка за 2025-01');

    const third = await sendStatements(deps(), { month: '2025-01', outDir: t.out });
    expect(third.sent).toBe(0);
    expect(received).toHaveLength(2);

    const resent = await sendStatements(deps(), {
      month: '2025-01',
      outDir: t.out,
      subMerchantId: 'sm-a',
      resend: true,
    });
    expect(resent.sent).toBe(1);
    expect(received).toHaveLength(3);
    // a resend is another message: another Message-ID, recorded as resend 1
    expect(received[2]!.mail.messageId).not.toBe(received[0]!.mail.messageId);
    const sent = (await t.store.readStream(statementDeliveryStream('2025-01')))
      .filter((e) => e.type === StatementSent.type)
      .map((e) => StatementSent.schema.parse(e.data));
    expect(sent.map((s) => [s.subMerchantId, s.resend])).toEqual([
      ['sm-a', 0],
      ['sm-b', 0],
      ['sm-a', 1],
    ]);
  });

  it("takes each sub-merchant's address from the directory's email column", async () => {
    await t.directory(
      'sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\nsm-b,Beta Store,0,\n',
    );
    const recipientOf = directoryRecipients(t.store);
    expect(await recipientOf('sm-a')).toEqual({ email: 'alpha@example.test', name: 'Alpha Shop' });
    expect(await recipientOf('sm-b')).toBeUndefined();
    expect(await recipientOf('sm-unknown')).toBeUndefined();
  });

  it('refuses to send a file changed since it was issued, and names a sub-merchant without an address', async () => {
    const plan = await planDelivery(
      { ...deps(), recipientOf: async (id: string) => (id === 'sm-a' ? undefined : addresses[id]) },
      { month: '2025-01', outDir: path.join(t.out, 'nowhere'), resend: true },
    );
    expect(plan.map((p) => [p.subMerchantId, p.status])).toEqual([
      ['sm-a', 'no-address'],
      ['sm-b', 'file-missing'],
    ]);
  });
});

describe("a statement's Message-ID domain", () => {
  it("is the From address's domain, with or without a display name; never the tool's name", () => {
    expect(senderDomain('statements@marketplace.test')).toBe('marketplace.test');
    expect(senderDomain('Marketplace LLC <Payouts@Marketplace.Example>')).toBe('marketplace.example');
    expect(senderDomain('"a@b" <payouts@shop.example>')).toBe('shop.example');
    expect(senderDomain('no address')).toBe('localhost');
    expect(senderDomain('x@bad domain')).toBe('localhost');
  });
});
