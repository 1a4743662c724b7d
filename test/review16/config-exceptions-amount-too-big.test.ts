import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * An amount of RECON_CONFIG's `exceptions` written as a JSON number beyond 2^53 − 1 (`"medium": 1e30`) was refused
 * with two lines for the one field, each giving the limit as zod writes it, 9007199254740991: sixteen digits that
 * pass the Luhn check, so the card-number scrubber of every message printed "<=900719******0991", a limit no one
 * can read. Now one line per field, saying what to write instead, with no number the scrubber would mask.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-exceptions-'));
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

describe('exceptions: an amount too big for a JSON number', () => {
  it('is refused in one readable line per field (exit 78)', () => {
    const r = reconConfig({ exceptions: { amountAtLeast: { medium: 1e30 }, writeOff: { approvalAbove: 2 ** 53 } } });
    expect(r.code).toBe(78);
    expect(r.stderr).not.toContain('*');
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(lines).toEqual([
      `  - RECON_CONFIG: ${r.at}: exceptions.amountAtLeast.medium: expected whole minor units: a JSON number up to 2^53 − 1, or a string of up to 18 digits (example: RECON_CONFIG=./recon.projects.json)`,
      `  - RECON_CONFIG: ${r.at}: exceptions.writeOff.approvalAbove: expected whole minor units: a JSON number up to 2^53 − 1, or a string of up to 18 digits (example: RECON_CONFIG=./recon.projects.json)`,
    ]);
  });

  it('the same amount as a string of digits, and a safe number, are taken', () => {
    const r = reconConfig({
      exceptions: {
        amountAtLeast: { medium: '100000000000000000', high: '200000000000000000', critical: '999999999999999999' },
        writeOff: { approvalAbove: 2 ** 53 - 1 },
      },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
