import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env';
import { sendAlert } from '../../src/alerts/channels';

/**
 * RECON_SMTP_URL whose password holds a bare "%" (a generated password "50%off" pasted unencoded). WHATWG URL
 * accepts it, so `recon config` passed it (exit 0); nodemailer then reads the URL with the legacy parser, which
 * decodes the credentials with decodeURIComponent: every statement mail and every e-mail alert failed with
 * "URI malformed", naming neither RECON_SMTP_URL nor what to fix. DATABASE_URL is refused for the same value
 * (test/config/connection-strings.test.ts); RECON_SMTP_URL was not checked the same way.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SMTP_URL = 'smtps://payouts%40example.com:50%offPass@127.0.0.1:1';

describe('RECON_SMTP_URL with a password nodemailer cannot decode', () => {
  it('the mail of an alert through that URL fails with "URI malformed" (what the check must prevent)', async () => {
    const c = loadConfig({ RECON_SMTP_URL: SMTP_URL, RECON_MAIL_FROM: 'payouts@example.com' });
    const mail = c.ok ? c.config.mail : { smtpUrl: SMTP_URL, from: 'payouts@example.com' };
    const alert = {
      alertId: '00000000-0000-4000-8000-000000000001',
      rule: 'r',
      kind: 'job_failed',
      subject: 's',
      title: 't',
      text: 'x',
      facts: {},
      raisedAt: new Date().toISOString(),
      channels: ['mail'],
    } as never;
    await expect(
      sendAlert(alert, { type: 'email', to: ['ops@example.com'] } as never, { mail, timeoutMs: 500 }, new Date()),
    ).rejects.toThrow(/URI malformed/);
  });

  it('is refused by the configuration check, naming RECON_SMTP_URL', () => {
    const r = loadConfig({ RECON_SMTP_URL: SMTP_URL, RECON_MAIL_FROM: 'payouts@example.com' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.variable)).toContain('RECON_SMTP_URL');
  });

  it('recon config exits 78 naming RECON_SMTP_URL, without the password', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        RECON_SMTP_URL: SMTP_URL,
        RECON_MAIL_FROM: 'payouts@example.com',
      },
    });
    expect(r.stderr).toMatch(/RECON_SMTP_URL/);
    expect(r.status).toBe(78);
    expect(r.stderr + r.stdout).not.toContain('50%offPass');
  });
});
