import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A misspelt variable (RECON_TIMEZON=Europe/Kyiv) was ignored without a word: `recon config` printed the
 * configuration with its default (UTC) and exit 0, and the deployment ran in the wrong zone. Now `recon config`
 * (and `recon start`, in its log) warns of every RECON_* variable set that recon does not read, naming the
 * documented one nearest to it; still exit 0, as another program may share the prefix. A variable the project
 * file reads as "env:NAME" is read, not warned of.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r15-vars-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function reconConfig(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const warning = (name: string) =>
  new RegExp(`^recon config: warning: ${name}: set, but recon reads no such variable`, 'm');

describe('recon config: a RECON_* variable recon does not read', () => {
  it('is warned of, naming the variable meant, and changes nothing (exit 0)', () => {
    const file = path.join(dir, 'recon.json');
    writeFileSync(
      file,
      JSON.stringify({
        alerts: { channels: { hook: { type: 'slack', url: 'env:RECON_OPS_SLACK_URL' } } },
      }),
    );
    const r = reconConfig({
      RECON_TIMEZON: 'Europe/Kyiv',
      RECON_CRON_NIGTHLY: '0 3 * * *',
      RECON_GRACE_HOURS: '72',
      RECON_CONFIG: file,
      RECON_OPS_SLACK_URL: 'https://hooks.slack.example/services/T0/B0/secret-token-value',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^recon config: warning: RECON_TIMEZON: set, but recon reads no such variable \(did you mean RECON_TIMEZONE\?\); it has no effect$/m,
    );
    expect(r.stderr).toMatch(/RECON_CRON_NIGTHLY: .*\(did you mean RECON_CRON_NIGHTLY\?\)/);
    // documented, or read through the project file: no warning
    expect(r.stderr).not.toMatch(warning('RECON_GRACE_HOURS'));
    expect(r.stderr).not.toMatch(warning('RECON_CONFIG'));
    expect(r.stderr).not.toMatch(warning('RECON_OPS_SLACK_URL'));
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    const shown = JSON.parse(r.stdout) as { timezone: string; graceHours: number; schedules: { nightly: string } };
    expect(shown).toMatchObject({ timezone: 'UTC', graceHours: 72, schedules: { nightly: '30 2 * * *' } });
  });

  it('is warned of beside the problems of an invalid configuration', () => {
    const r = reconConfig({ RECON_TIMEZON: 'Europe/Kyiv', RECON_GRACE_HOURS: '-1' });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(warning('RECON_TIMEZON'));
    expect(r.stderr).toMatch(/^ {2}- RECON_GRACE_HOURS: /m);
  });
});
