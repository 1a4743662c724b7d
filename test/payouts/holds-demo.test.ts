import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * `recon demo` prints, per currency, what its statements hold and ask to pay and what recon found paid, and
 * checks each against the sandbox's ground truth (src/sandbox/ground-truth.ts, by the hold policy, without
 * recon's journal) and the sandbox bank (issue 25). Run as a user runs it, on a month, zone and seed of its
 * own (summer time starts in the month in Kyiv).
 */

let db: TestDatabase;
let dir: string;
let run: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  dir = mkdtempSync(path.join(tmpdir(), 'recon-holds-demo-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    RECON_DATA_DIR: dir,
    RECON_TIMEZONE: 'Europe/Kyiv',
  };
  for (const k of Object.keys(env)) if (k.startsWith('PSP_') || k.startsWith('RECON_HOLD_')) delete env[k];
  const args = ['bin/recon.mjs', 'demo', '--seed', 'holds-demo', '--payments', '150', '--month', '2025-03'];
  run = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, '--out', path.join(dir, 'out')], {
      cwd: path.resolve(__dirname, '../..'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}, 300_000);

afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('recon demo: held, due and paid per currency against the ground truth', () => {
  it('prints each currency’s figures and finds them exactly as the sandbox’s ground truth', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const lines = run.stdout.split('\n');
    const start = lines.findIndex((l) => l.includes('money per currency'));
    expect(start, run.stdout.slice(-3000)).toBeGreaterThan(0);
    const figures = lines.slice(start + 1).filter((l) => /^\[.*\]\s+[A-Z]{3}\s+held /.test(l));
    expect(figures.map((l) => l.match(/\s([A-Z]{3})\s+held/)![1])).toEqual(['EUR', 'UAH', 'USD', 'XTS']);
    for (const l of figures) {
      expect(l).toMatch(/held\s+\d+\.\d\d\s+due\s+-?\d+\.\d\d\s+paid\s+\d+\.\d\d$/);
    }
    // something is held (the sandbox injects breaks in every currency's payments)
    expect(figures.some((l) => !/held\s+0\.00/.test(l))).toBe(true);
    expect(run.stdout).toContain('held, due and paid per currency: exactly the injected breaks’ under the hold policy');
    expect(run.stdout).not.toContain('NOT the injected holds');
  });
});
