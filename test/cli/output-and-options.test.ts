import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressWriter } from '../../src/cli/commands/statements';
import { OutputDirectoryError, ensureOutDir } from '../../src/export/out-dir';
import { consoleToStderr } from '../../src/log';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The command line's contract: stdout carries the command's output alone (logs on stderr), options are
 * checked before the database starts with messages naming the option as typed, and an `--out` that is a
 * file or a place nothing can be written is a clear error (it once spun at 100 % CPU under /proc, deaf to
 * SIGTERM: Node's recursive mkdir loops forever where mkdir answers ENOENT under a parent that exists).
 */

const BIN = path.resolve('bin/recon.mjs');
// nothing listens there: a command that reached the database would fail on it, not with a usage error
// its password is scrubbed from whatever recon prints: one that no path or message holds
const NO_DATABASE = 'postgres://recon:nowhere-pw@127.0.0.1:9/recon';
let db: TestDatabase;
const tmp = mkdtempSync(path.join(tmpdir(), 'recon-cli-output-'));

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await db.drop();
});

function recon(
  args: string[],
  databaseUrl: string,
  extra: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl, extra: { RECON_OUT_DIR: tmp, ...extra } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

describe('--out', () => {
  it('a place that cannot be written (/proc/x) is refused at once, naming --out', async () => {
    for (const args of [
      ['report', 'nightly', '--date', '2025-01-01', '--out', '/proc/x/reports'],
      ['statements', '--month', '2025-01', '--out', '/proc/x'],
    ]) {
      const r = await recon(args, NO_DATABASE, {}, 50_000);
      expect({ killed: r.killed, code: r.code, stderr: r.stderr }).toEqual({
        killed: false,
        code: 2,
        stderr: expect.stringMatching(/--out: cannot create the directory \/proc\/x/),
      });
    }
  }, 140_000);

  it('a file is refused, naming --out and the file', async () => {
    const file = path.join(tmp, 'not-a-dir.xlsx');
    writeFileSync(file, 'x');
    const r = await recon(['report', 'nightly', '--date', '2025-01-01', '--out', file], NO_DATABASE, {}, 40_000);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({
      code: 2,
      stderr: `recon: --out: ${file} is a file, not a directory (EXPORT_OUT_DIR_REFUSED)`,
    });
    expect(() => ensureOutDir(path.join(file, 'below'), 'RECON_OUT_DIR')).toThrow(OutputDirectoryError);
  });
});

describe('options are checked before the database starts', () => {
  it.each([
    [['discrepancies', '--from', '2025-02-30'], '--from'],
    [['discrepancies', '--to', '2025/01/01'], '--to'],
    [['discrepancies', '--type', 'amount_mismatchh'], '--type'],
    [['discrepancies', '--status', 'closed'], '--status'],
    [['discrepancies', '--sort', 'size'], '--sort'],
    [['statements', '--month', '2025-13'], '--month'],
  ])('recon %j: exit 2 naming %s, without a database', async (args, option) => {
    const r = await recon(args, NO_DATABASE, {}, 40_000);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining(option) });
    expect(r.stdout).toBe('');
  });
});

describe('stdout carries the output alone', () => {
  it('discrepancies --format json is pure JSON while logs (debug level) go to stderr', async () => {
    const r = await recon(['discrepancies', '--format', 'json'], db.url, { RECON_LOG_LEVEL: 'debug' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toMatch(/"level":"(debug|info)"/);
  });

  it('an unknown --sub-merchant is warned about on stderr; stdout stays the output', async () => {
    // the directory's view is the journal projection's: built as `recon project` builds it
    expect((await recon(['project'], db.url)).code).toBe(0);
    const r = await recon(['discrepancies', '--sub-merchant', 'sm-nobody', '--format', 'json'], db.url);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toContain(
      'recon: warning: --sub-merchant sm-nobody is not in the sub-merchant directory (a typo?)',
    );
  });

  it('whatever a library prints with console.log goes to stderr', () => {
    const saved = { log: console.log, info: console.info, debug: console.debug };
    const written: string[] = [];
    try {
      consoleToStderr({ write: (t: string) => written.push(t) });
      console.log('notice: %s', 'relation exists');
      console.info({ a: 1 });
    } finally {
      Object.assign(console, saved);
    }
    expect(written).toEqual(['notice: relation exists\n', '{ a: 1 }\n']);
  });

  it('statements show progress on a terminal only', () => {
    const tty: string[] = [];
    const pipe: string[] = [];
    const onTty = progressWriter({ isTTY: true, write: (t: string) => tty.push(t) });
    const onPipe = progressWriter({ isTTY: false, write: (t: string) => pipe.push(t) });
    for (const w of [onTty, onPipe]) {
      w.update({ done: 1, total: 2, lines: 10 });
      w.end();
    }
    expect(tty).toEqual(['\r  statements 1/2, 10 lines', '\n']);
    expect(pipe).toEqual([]);
  });
});
