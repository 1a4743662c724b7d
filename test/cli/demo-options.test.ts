import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoPspTimeoutMs } from '../../src/cli/demo';
import { MAX_DEMO_PAYMENTS, parseDemoOptions } from '../../src/cli/demo-options';

/**
 * `recon demo --payments` takes a large marketplace's month (issue 26): up to 1,000,000 payments, refused above
 * with a usage error naming the option. Checked without running the month: the parser itself, and the real
 * binary refusing a bad --month only after --payments 1000000 was accepted.
 */

const BIN = path.resolve('bin/recon.mjs');

function recon(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, RECON_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe('recon demo --payments', () => {
  it('accepts 1,000,000 payments', () => {
    expect(MAX_DEMO_PAYMENTS).toBe(1_000_000);
    expect(parseDemoOptions({ seed: 's', payments: '1000000', out: './out' })).toEqual({
      seed: 's',
      payments: 1_000_000,
    });
    expect(parseDemoOptions({ seed: 's', payments: '300', month: '2026-09', out: './out' })).toEqual({
      seed: 's',
      payments: 300,
      month: '2026-09',
    });
  });

  it('refuses 0, 1,000,001 and a non-number, naming --payments', () => {
    for (const payments of ['0', '1000001', '12.5', 'many'])
      expect(() => parseDemoOptions({ seed: 's', payments, out: './out' })).toThrow(
        /--payments: expected 1\.\.1000000/,
      );
  });

  it('the binary takes --payments 1000000 (the refusal is the month, checked next)', async () => {
    const r = await recon(['demo', '--payments', '1000000', '--month', '2025-13', '--out', './out-never']);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining('--month') });
    expect(r.stderr).not.toContain('--payments');
  }, 60_000);

  it('the binary refuses --payments 1000001 with exit 2', async () => {
    const r = await recon(['demo', '--payments', '1000001', '--out', './out-never']);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({
      code: 2,
      stderr: expect.stringContaining('--payments'),
    });
  }, 60_000);
});

describe("the demo's wait for its stand-in PSP", () => {
  it('is RECON_PSP_TIMEOUT_MS for an ordinary month, in proportion to a large one, never over 600 s', () => {
    expect(demoPspTimeoutMs(30_000, 300)).toBe(30_000);
    expect(demoPspTimeoutMs(30_000, 100_000)).toBe(30_000);
    expect(demoPspTimeoutMs(10_000, 100_000)).toBe(30_000);
    expect(demoPspTimeoutMs(30_000, 1_000_000)).toBe(300_000);
    expect(demoPspTimeoutMs(500_000, 1_000_000)).toBe(500_000);
    expect(demoPspTimeoutMs(600_000, 1_000_000)).toBe(600_000);
  });
});
