import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env';

/**
 * A DATABASE_URL whose password holds a bare "%" (e.g. a generated password "50%off" pasted unencoded).
 * WHATWG URL accepts it, so the configuration check (src/config/env.ts url()) passes and `recon config`
 * exits 0; the driver then decodes the password with decodeURIComponent and every command dies with
 * "recon: URI malformed", exit 1, naming neither DATABASE_URL nor what to fix.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const URL_WITH_BARE_PERCENT = 'postgres://recon:50%off@127.0.0.1:1/recon';

describe('DATABASE_URL with a password the driver cannot decode', () => {
  it('is refused by the configuration check, naming DATABASE_URL', () => {
    const r = loadConfig({ DATABASE_URL: URL_WITH_BARE_PERCENT });
    expect(r.ok).toBe(false);
  });

  it('recon migrate stops with exit 78 (configuration) and a message naming DATABASE_URL (not "URI malformed")', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'migrate'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: URL_WITH_BARE_PERCENT },
    });
    expect(r.stderr).toMatch(/DATABASE_URL/);
    expect(r.status).toBe(78);
    expect(r.stderr).not.toContain('50%off');
  });
});
