import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs the real `recon` entry point with only the given variables (plus PATH/HOME). */
function recon(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('recon config', () => {
  it('exits 78 (configuration) with one message naming every problem, and never echoes a secret', () => {
    const r = recon(['config'], {
      RECON_TIMEZONE: 'Mars/Olympus',
      RECON_GRACE_HOURS: '-1',
      PSP_API_KEY: 'pk_live_TOPSECRET_cli',
      DATABASE_URL: 'mysql://u:db_TOPSECRET_pw@h/d',
    });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^recon cannot start: \d+ configuration problems \(CONFIG_INVALID\)\n/);
    for (const v of [
      'RECON_TIMEZONE',
      'RECON_GRACE_HOURS',
      'DATABASE_URL',
      'PSP_BASE_URL',
      'PSP_REPORT_URL',
      'PSP_POS_ID',
      'PSP_API_SECRET',
      'PSP_ENDPOINTS_KEY',
    ]) {
      expect(r.stderr).toMatch(new RegExp(`^  - ${v}: .*\\(example: ${v}=`, 'm'));
    }
    expect(r.stderr).not.toMatch(/TOPSECRET/);
  });

  it('prints a valid configuration with the secrets hidden', () => {
    const r = recon(['config'], {
      PSP_BASE_URL: 'https://api.psp.example',
      PSP_REPORT_URL: 'https://report.psp.example',
      PSP_POS_ID: '11111111-2222-4333-8444-555555555555',
      PSP_API_KEY: 'pk_live_TOPSECRET_cli',
      PSP_API_SECRET: 'sk_live_TOPSECRET_cli',
      PSP_ENDPOINTS_KEY: 'ek_live_TOPSECRET_cli',
      DATABASE_URL: 'postgres://recon:db_TOPSECRET_pw@localhost:5432/recon',
      RECON_TIMEZONE: 'Europe/Kyiv',
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as {
      timezone: string;
      databaseUrl: string;
      projects: { posId: string; apiKey: string }[];
    };
    expect(shown.timezone).toBe('Europe/Kyiv');
    expect(shown.databaseUrl).toBe('(set)');
    expect(shown.projects).toEqual([
      expect.objectContaining({ posId: '11111111-2222-4333-8444-555555555555', apiKey: '(set)' }),
    ]);
    expect(r.stdout).not.toMatch(/TOPSECRET/);
  });

  it('lists every variable with its default and example', () => {
    const r = recon(['config', '--variables'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('RECON_GRACE_HOURS\n');
    expect(r.stdout).toContain('default: 48; example: 72');
  });
});
