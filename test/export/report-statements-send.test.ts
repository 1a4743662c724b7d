import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { reconEnv } from '../../fixtures/psp-env';
import { TZ, useStatementTest } from './support';

/**
 * `recon statements send --month M [--dry-run]` through the real binary, against an SMTP server on
 * loopback. Every form of it exited 2 ("required option '--month' not specified"): `statements` has a
 * --month of its own, and commander gave it the one typed after `send`.
 */

const BIN = path.resolve('bin/recon.mjs');
const t = useStatementTest({ pos: 'pos-send-cli', outPrefix: 'recon-send-cli-' });
const received: { to: string[]; subject: string; files: string[] }[] = [];
let server: SMTPServer;
let smtpUrl: string;

function recon(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({
        databaseUrl: t.db.url,
        timezone: TZ,
        extra: { RECON_OUT_DIR: t.out, RECON_SMTP_URL: smtpUrl, RECON_MAIL_FROM: 'statements@marketplace.test' },
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: mail.subject ?? '',
            files: mail.attachments.map((a) => a.filename ?? ''),
          });
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  await t.directory(
    'sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\nsm-b,Beta Store,0,beta@example.test\n',
  );
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('recon statements send (the real binary)', () => {
  it('--dry-run lists what would go to whom and sends nothing', async () => {
    const r = await recon(['statements', 'send', '--month', '2025-01', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => l.split('\t').slice(0, 3))).toEqual([
      ['sm-a', 'alpha@example.test', 'to send'],
      ['sm-b', 'beta@example.test', 'to send'],
    ]);
    expect(received).toHaveLength(0);
  });

  it('sends each sub-merchant its statement files once; a second send sends nothing again', async () => {
    const r = await recon(['statements', 'send', '--month', '2025-01']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 sent, 0 failed');
    expect(received.map((m) => [m.to, m.files.map((f) => f.slice(-4)).sort()])).toEqual([
      [['alpha@example.test'], ['.pdf', 'xlsx']],
      [['beta@example.test'], ['.pdf', 'xlsx']],
    ]);
    expect(received[0]!.subject).toContain('2025-01');

    const again = await recon(['statements', 'send', '--sub-merchant', 'sm-a', '--month', '2025-01']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('sent before');
    expect(again.stdout).toContain('0 sent, 0 failed');
    expect(received).toHaveLength(2);
  });

  it("the options of `statements` itself still work, and a bad --month after `send` is send's usage error", async () => {
    const bad = await recon(['statements', 'send', '--month', '2025-13']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--month: expected YYYY-MM');
    const runs = await recon(['statements', '--runs', '--month', '2025-01']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain('2025-01');
  });
});
