import { spawnSync } from 'node:child_process';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';

/**
 * RECON_MAIL_FROM was checked for an "@" and nothing else: "payouts@" or "@" passed `recon config` and the start,
 * and nodemailer sent it as it stood (the envelope sender every SMTP server refuses, so every statement's mail
 * failed at the month's send), "a@x.example, b@y.example" became a From of two mailboxes without a Sender, and a
 * line break in it made nodemailer read a group of other addresses. Now it must be one mailbox as nodemailer reads
 * it, refused at start naming the variable.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SMTP = 'smtp://statements:app-password@smtp.example.com:587';

function reconConfig(from: string) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECON_SMTP_URL: SMTP, RECON_MAIL_FROM: from },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const BAD = ['payouts@', '@', 'payouts@example.com, other@example.org', 'payouts@example.com\nBcc: x@example.org'];

describe('RECON_MAIL_FROM: one sender', () => {
  it('nodemailer sends what it is given: no sender domain, or a From of two mailboxes', async () => {
    const t = nodemailer.createTransport({ streamTransport: true, buffer: true });
    const sent = async (from: string) => {
      const info = await t.sendMail({ from, to: 'sub@example.com', text: 'statement' });
      return { envelope: info.envelope.from, from: /^From: (.*)$/m.exec(info.message.toString())?.[1] };
    };
    expect((await sent(BAD[0]!)).envelope).toBe('payouts@');
    expect((await sent(BAD[2]!)).from).toBe('payouts@example.com, other@example.org');
    expect((await sent(BAD[3]!)).envelope).toBe('x@example.org');
  });

  it('is refused by recon config naming the variable (exit 78)', () => {
    for (const from of BAD) {
      const r = reconConfig(from);
      expect(r.code, JSON.stringify(from)).toBe(78);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^ {2}- RECON_MAIL_FROM: expected one sender address, e\.g\. Marketplace Payouts/m);
    }
  });

  it('a name and an address, or an address alone, is taken', () => {
    for (const from of [
      'Marketplace Payouts <payouts@example.com>',
      'statements@marketplace.test',
      'recon@localhost',
    ]) {
      const r = reconConfig(from);
      expect(r.stderr, from).toBe('');
      expect(r.code, from).toBe(0);
    }
  });
});
