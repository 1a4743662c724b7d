import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * `recon demo --serve | head -n 1`: the reader leaves at the demo's second line. The demo is stopped as by
 * Ctrl-C and ends with 141 (a fresh reviewer's case: before, the demo ran on to its end and then served the
 * console, its tokens printed to nobody, and the pipeline never ended).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-demo-reader-left-'));
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recon demo --serve | head -n 1', () => {
  it('ends (141) once its reader has left', async () => {
    const out = path.join(dir, 'out');
    // its own process group, so that whatever is left running is ended by the test
    const child = spawn(
      'bash',
      [
        '-c',
        `set -o pipefail; '${process.execPath}' bin/recon.mjs demo --payments 10 --month 2026-09 --out '${out}' --serve --port 0 | head -n 1 >/dev/null`,
      ],
      {
        cwd: ROOT,
        detached: true,
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          DATABASE_URL: db.url,
          RECON_LOG_LEVEL: 'error',
        },
      },
    );
    let status: number | null | undefined;
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (code) => {
        status = code;
        resolve();
      }),
    );
    // the demo writes --out only at its end (statements, nightly report): once it has, 30 s more to end
    const wroteOut = () => existsSync(out) && readdirSync(out, { recursive: true }).length > 0;
    const deadline = Date.now() + 150_000;
    let outSeenAt: number | undefined;
    while (
      status === undefined &&
      Date.now() < deadline &&
      (outSeenAt === undefined || Date.now() < outSeenAt + 30_000)
    ) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (outSeenAt === undefined && wroteOut()) outSeenAt = Date.now();
    }
    const ranToItsEnd = wroteOut();
    const endedByItself = status !== undefined;
    if (!endedByItself) {
      process.kill(-child.pid!, 'SIGINT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (status === undefined) process.kill(-child.pid!, 'SIGKILL');
    }
    // actual: { endedByItself: false (still serving 30 s after the demo ended; 141 only after a SIGINT), ranToItsEnd: true }
    expect({ endedByItself, status, ranToItsEnd }).toEqual({ endedByItself: true, status: 141, ranToItsEnd: false });
  }, 240_000);
});
