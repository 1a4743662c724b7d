import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * RECON_CONFIG's objects dropped a key they did not know: `"payouts": { "matchWindowDay": 3 }` left the window at
 * its default 10 days without a word, and the same for a mistyped key of `bank`, `bank.settlement`, an account,
 * a project, or the file itself ("bnak"). Now every object of the file refuses a key it does not know, naming
 * the key's path and the keys it expects, and `recon config` exits 78 with nothing applied.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r15-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROJECT = {
  name: 'live',
  posId: '11111111-2222-4333-8444-555555555555',
  baseUrl: 'https://api.psp.example',
  reportUrl: 'https://report.psp.example',
  apiKey: 'pk_live_TOPSECRET',
  apiSecret: 'sk_live_TOPSECRET',
  endpointsKey: 'ek_live_TOPSECRET',
};
const ACCOUNT = { id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' };

function reconConfig(file: object) {
  const at = path.join(dir, `recon-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(at, JSON.stringify(file));
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECON_CONFIG: at },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, at };
}

describe('RECON_CONFIG: a key no object of the file knows', () => {
  it('is refused naming its path and the keys expected, exit 78, nothing printed as in force', () => {
    const r = reconConfig({
      projects: [{ ...PROJECT, authSchema: 'PAY' }],
      bank: {
        accounts: [{ ...ACCOUNT, nmae: 'payouts EUR' }],
        settlement: { lagBusinessDay: 2 },
        payouts: { dueDays: 5, matchWindowDay: 3 },
      },
      bnak: {},
    });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    const line = (text: string) => `  - RECON_CONFIG: ${r.at}: ${text} (example:`;
    for (const l of [
      'bank.payouts.matchWindowDay: unknown key; expected one of dueDays, matchWindowDays, holidays, charset',
      'bank.settlement.lagBusinessDay: unknown key; expected one of lagBusinessDays, holidays, tolerance, lateBusinessDays',
      'bank.accounts.0.nmae: unknown key; expected one of id, currency, role, name',
      'projects.0.authSchema: unknown key; expected one of name, posId, baseUrl, reportUrl, apiKey, apiSecret, endpointsKey, authScheme',
      'bnak: unknown key; expected one of projects, bank, alerts, exceptions',
    ])
      expect(r.stderr).toContain(line(l));
    expect(r.stderr).toMatch(/^recon cannot start: 5 configuration problems/);
    expect(r.stderr).not.toMatch(/TOPSECRET/);
  });

  it("names an alert's or an exceptions setting's unknown key by its own path too", () => {
    const r = reconConfig({
      alerts: {
        channels: { ops: { type: 'email', to: ['ops@example.com'], cc: ['x@example.com'] } },
        rules: [{ name: 'big', on: 'discrepancy', match: { minAmont: '500' }, channels: ['ops'] }],
        retry: { maxAttempt: 3 },
      },
      exceptions: { writeOff: { approvalAbvoe: '100' } },
    });
    expect(r.code).toBe(78);
    for (const l of [
      'alerts.channels.ops.cc: unknown key; expected one of type, to',
      'alerts.rules.0.match.minAmont: unknown key; expected one of types, minAmount, minAgeHours, currency, subMerchant, severity',
      'alerts.retry.maxAttempt: unknown key; expected one of maxAttempts, baseSeconds, maxSeconds',
      'exceptions.writeOff.approvalAbvoe: unknown key; expected one of account, approvalAbove, approvalAboveByCurrency',
    ])
      expect(r.stderr).toContain(`: ${l} (example:`);
  });

  it('takes a file with every documented key, as it did', () => {
    const r = reconConfig({
      projects: [{ ...PROJECT, authScheme: 'PAY' }],
      bank: {
        accounts: [{ ...ACCOUNT, name: 'payouts EUR' }],
        encoding: 'windows-1252',
        settlement: { lagBusinessDays: 2, holidays: ['2026-12-25'], tolerance: { EUR: '50' }, lateBusinessDays: 4 },
        payouts: { dueDays: 4, matchWindowDays: 3, holidays: ['2026-12-24'], charset: 'sepa' },
        charges: { camtSubFamilies: ['CHRG'], mt940Types: ['NCHG'], gvc: ['805'], codes: ['FEE'] },
      },
      alerts: { channels: {}, rules: [], maxPerRun: 5, retry: { maxAttempts: 3 }, jobLookbackHours: 24 },
      exceptions: { slaHours: { high: 24 }, writeOff: { approvalAbove: '100' } },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as { bank: { payouts: { matchWindowDays: number; dueDays: number } } };
    expect(shown.bank.payouts).toMatchObject({ dueDays: 4, matchWindowDays: 3 });
  });
});
