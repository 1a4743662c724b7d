import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { issueStatements } from '../../src/export/statements/issue';
import { TZ, useStatementTest } from '../export/support';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * `recon statements send` printed the plan after sending: every sub-merchant it tried said "to send", the one the
 * server refused (550) as much as the one it took, so the operator could not tell who did not get the statement;
 * and a month in which nothing went out (a sub-merchant without an address) ended "0 sent, 0 failed", exit 0.
 * Now each line says what happened (sent, or failed with the server's answer), the summary counts what was not
 * sent and why, and the command exits 1 when a statement of the month did not reach its sub-merchant.
 */

const t = useStatementTest({ pos: 'pos-r15-send-outcome', outPrefix: 'r15-send-outcome-' });
let server: SMTPServer;
let smtpUrl: string;
const received: string[] = [];

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onRcptTo(address, _session, cb) {
      if (address.address === 'beta@example.test')
        cb(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 }));
      else cb();
    },
    onData(stream, session, cb) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((r) => r.address).join(','));
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  await t.directory(
    'sub_merchant_id,name,reserve_hold_days,email\nsm-a,Alpha Shop,0,alpha@example.test\nsm-b,Beta Store,0,beta@example.test\nsm-c,Gamma,0,\n',
  );
  await t.observe(t.sale('p1', '2025-01-10T10:00:00Z', 'Alpha Shop', 10_000n), '2025-01-11T00:00:00Z');
  await t.observe(t.sale('p2', '2025-01-12T10:00:00Z', 'Beta Store', 20_000n), '2025-01-13T00:00:00Z');
  await t.observe(t.sale('p3', '2025-01-14T10:00:00Z', 'Gamma', 30_000n), '2025-01-15T00:00:00Z');
  await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
});

afterAll(async () => {
  await killAll();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const env = () =>
  reconEnv({
    databaseUrl: t.db.url,
    timezone: TZ,
    extra: { RECON_OUT_DIR: t.out, RECON_SMTP_URL: smtpUrl, RECON_MAIL_FROM: 'statements@marketplace.test' },
  });
const lineOf = (stdout: string, id: string) => stdout.split('\n').find((l) => l.startsWith(`${id}\t`)) ?? '';

describe('recon statements send: what happened to each sub-merchant', () => {
  it('names the refused recipient with the answer, and the one without an address, and exits 1', {
    timeout: 120_000,
  }, async () => {
    const r = await runRecon(['statements', 'send', '--month', '2025-01'], env());
    expect(received).toEqual(['alpha@example.test']);
    expect(lineOf(r.stdout, 'sm-a')).toMatch(/\talpha@example\.test\tsent\t/);
    const beta = lineOf(r.stdout, 'sm-b');
    expect(beta).toContain('beta@example.test');
    expect(beta).toMatch(/\tfailed: .*550/);
    expect(beta).not.toContain('to send');
    expect(lineOf(r.stdout, 'sm-c')).toContain('no e-mail address');
    expect(r.stdout).toMatch(/1 sent, 1 failed, 1 without an e-mail address/);
    expect(r.code, r.stderr).toBe(1);

    // again: nothing sent twice; the refused one tried again and the one without an address still told
    const again = await runRecon(['statements', 'send', '--month', '2025-01'], env());
    expect(received).toEqual(['alpha@example.test']);
    expect(lineOf(again.stdout, 'sm-a')).toContain('sent before');
    expect(lineOf(again.stdout, 'sm-b')).toMatch(/\tfailed: .*550/);
    expect(again.stdout).toMatch(/0 sent, 1 failed, 1 without an e-mail address/);
    expect(again.code).toBe(1);
  });
});
