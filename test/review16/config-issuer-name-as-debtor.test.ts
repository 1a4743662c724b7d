import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { debtorsFor } from '../../src/payout-runs/debtor';

/**
 * With RECON_PAYOUTS_DEBTOR_NAME unset, the payment file (pain.001) names RECON_ISSUER_NAME as the debtor. The
 * start checked the issuer name by the statements' rule (200 characters, tabs and line breaks let through) and
 * the debtor name only when RECON_PAYOUTS_DEBTOR_NAME was set: an issuer name of 141–200 characters, or one
 * holding a tab, passed `recon config` and `recon start`, and the month's payout run was the first to refuse it.
 * Now, with a payouts account configured, the start checks the issuer name by the payment file's rule too and
 * names RECON_ISSUER_NAME with the way out.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-debtor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAYOUTS = { accounts: [{ id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts' }] };
const LONG = `Marketplace ${'Holding '.repeat(17)}LLC`; // 152 characters: a statement takes it, a payment file not

function reconConfig(env: Record<string, string>, bank?: object) {
  const extra: Record<string, string> = {};
  if (bank) {
    extra.RECON_CONFIG = path.join(dir, `recon-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(extra.RECON_CONFIG, JSON.stringify({ bank }));
  }
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, ...extra },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('RECON_ISSUER_NAME as the payment file debtor', () => {
  it('a name of more than 140 characters is refused by the payout run', () => {
    expect(LONG.length).toBeGreaterThan(140);
    expect(LONG.length).toBeLessThanOrEqual(200);
    const bank = bankConfigFrom(bankConfigSchema.parse(PAYOUTS));
    expect(() => debtorsFor(['EUR'], bank, { RECON_ISSUER_NAME: LONG })).toThrow(/^RECON_ISSUER_NAME: at most 140/);
  });

  it('is refused at start naming RECON_ISSUER_NAME when a payouts account is configured (exit 78)', () => {
    for (const name of [LONG, 'Marketplace\tLLC']) {
      const r = reconConfig({ RECON_ISSUER_NAME: name }, PAYOUTS);
      expect(r.code).toBe(78);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^ {2}- RECON_ISSUER_NAME: names the payment file's debtor while RECON_PAYOUTS_DEBTOR_NAME is unset: at most 140 characters and no control characters there \(set RECON_PAYOUTS_DEBTOR_NAME/m,
      );
    }
  });

  it('is taken without a payouts account, or with RECON_PAYOUTS_DEBTOR_NAME set', () => {
    for (const [env, bank] of [
      [{ RECON_ISSUER_NAME: LONG }, undefined],
      [{ RECON_ISSUER_NAME: LONG, RECON_PAYOUTS_DEBTOR_NAME: 'Marketplace LLC' }, PAYOUTS],
    ] as const) {
      const r = reconConfig(env, bank);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  });
});
