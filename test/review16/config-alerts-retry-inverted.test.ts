import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alertsConfigFrom } from '../../src/config/alerts';
import { backoffSeconds } from '../../src/alerts/deliveries';

/**
 * `alerts.retry` of RECON_CONFIG took a `baseSeconds` above `maxSeconds` (7200 with the default 3600, or 600
 * with 300): the backoff is min(base × 2^(n−1), max), so every wait, the first one included, was silently the
 * max and the base configured was never applied. Now such a range is refused at start naming the field, as the
 * exceptions' thresholds out of order are.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-alerts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

describe('alerts.retry: a base delay above the max delay', () => {
  it('would have every wait cut to the max, so the base is never what the first retry waits', () => {
    expect(backoffSeconds(1, { maxAttempts: 6, baseSeconds: 7200, maxSeconds: 3600 })).toBe(3600);
  });

  it('is refused by recon config naming the field (exit 78), the max left at its default too', () => {
    const r = reconConfig({ alerts: { retry: { baseSeconds: 7200 } } });
    expect(r.code).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `  - RECON_CONFIG: ${r.at}: alerts.retry.baseSeconds: more than alerts.retry.maxSeconds`,
    );
  });

  it('is refused when both are given, and a base equal to the max is taken', () => {
    const bad = alertsConfigFrom({ retry: { maxAttempts: 3, baseSeconds: 600, maxSeconds: 300 } }, {});
    expect(bad.problems).toEqual([
      'alerts.retry.baseSeconds: more than alerts.retry.maxSeconds (expected baseSeconds ≤ maxSeconds)',
    ]);
    const equal = alertsConfigFrom({ retry: { maxAttempts: 3, baseSeconds: 300, maxSeconds: 300 } }, {});
    expect(equal.problems).toEqual([]);
    expect(equal.config.retry).toEqual({ maxAttempts: 3, baseSeconds: 300, maxSeconds: 300 });
    const r = reconConfig({ alerts: { retry: { baseSeconds: 60, maxSeconds: 3600 } } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
