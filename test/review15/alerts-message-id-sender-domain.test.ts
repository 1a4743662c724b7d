import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { type RaisedAlert, sendAlert } from '../../src/alerts/channels';

/**
 * An alert e-mail's Message-ID ended in `@recon`, the tool's name rather than a domain of the sender (RFC 5322
 * wants the right side unique to the sender; spam filters score a bare word there). It now ends in
 * RECON_MAIL_FROM's domain, as statement e-mails do, and stays the same across attempts of one alert, so a mail
 * system drops a repeat.
 */

const alert = {
  alertId: '6f1c1f2e-3d6b-5a8e-9c41-2b7d0e5a9f10',
  rule: 'big-settlements',
  kind: 'discrepancy',
  subject: 'd-1',
  title: 'New exception: settlement missing',
  text: 'A settlement of 1,500.00 UAH is missing.',
  facts: {},
  raisedAt: '2026-03-10T08:05:00.000Z',
} as RaisedAlert;

/** Sends the alert once per date from `from` through a transport that keeps the bytes; the Message-ID headers. */
async function messageIds(from: string, dates: readonly Date[]): Promise<string[]> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const ids: string[] = [];
  const send = transport.sendMail.bind(transport);
  transport.sendMail = (async (mail: Parameters<typeof send>[0]) => {
    const info = await send(mail);
    // headers unfolded: a long one continues on the next line
    const head = String(info.message)
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    const header = /^Message-ID: (.*)$/im.exec(head)?.[1];
    ids.push(header?.trim() ?? '');
    return info;
  }) as typeof transport.sendMail;
  for (const at of dates)
    await sendAlert(
      alert,
      { type: 'email', to: ['finance@example.test'] } as never,
      { mail: { smtpUrl: 'smtp://unused', from }, transport },
      at,
    );
  return ids;
}

describe('alert e-mail Message-ID', () => {
  it('ends in the sender address domain, the same for every attempt of one alert', async () => {
    const ids = await messageIds('Marketplace Recon <alerts@Pay.Example.com>', [
      new Date('2026-03-10T08:05:00Z'),
      new Date('2026-03-10T08:20:00Z'),
    ]);
    expect(ids).toEqual([`<alert-${alert.alertId}@pay.example.com>`, `<alert-${alert.alertId}@pay.example.com>`]);
  });

  it('takes the domain of a bare address too', async () => {
    const ids = await messageIds('recon@finance.example.org', [new Date()]);
    expect(ids).toEqual([`<alert-${alert.alertId}@finance.example.org>`]);
  });
});
