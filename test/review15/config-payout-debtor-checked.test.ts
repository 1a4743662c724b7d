import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * RECON_PAYOUTS_DEBTOR_BIC and RECON_PAYOUTS_DEBTOR_NAME were checked only when a payout run was drafted:
 * `recon config` said a BIC of "COBA DE FF" or a name holding a tab was fine (exit 0), and the month's run was
 * the first to refuse it. Now they are checked with every other variable at start, by the same rules the
 * payment file applies (src/config/payout-debtor.ts), and `recon config` exits 78 naming the variable.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

function reconConfig(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('recon config: the payout runs debtor', () => {
  it('refuses a BIC or a name the payment file cannot carry, naming the variable', () => {
    const r = reconConfig({ RECON_PAYOUTS_DEBTOR_BIC: 'COBA DE FF', RECON_PAYOUTS_DEBTOR_NAME: 'Marketplace\tLLC' });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ {2}- RECON_PAYOUTS_DEBTOR_BIC: expected a BIC of 8 or 11 letters and digits/m);
    expect(r.stderr).toMatch(/^ {2}- RECON_PAYOUTS_DEBTOR_NAME: at most 140 characters and no control characters/m);
    const long = reconConfig({ RECON_PAYOUTS_DEBTOR_NAME: 'M'.repeat(141) });
    expect(long.code).toBe(78);
    expect(long.stderr).toMatch(/^ {2}- RECON_PAYOUTS_DEBTOR_NAME: /m);
  });

  it('takes a BIC of 8 or 11 (any case) and a name of 140 characters', () => {
    for (const env of [
      { RECON_PAYOUTS_DEBTOR_BIC: 'cobadeff', RECON_PAYOUTS_DEBTOR_NAME: 'Marketplace LLC' },
      { RECON_PAYOUTS_DEBTOR_BIC: 'COBADEFFXXX', RECON_PAYOUTS_DEBTOR_NAME: 'M'.repeat(140) },
    ]) {
      const r = reconConfig(env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  });
});
