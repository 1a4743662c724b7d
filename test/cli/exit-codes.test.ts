import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { asReconError, EXIT_CODE } from '../../src/cli/errors';
import { reportError } from '../../src/cli/main';
import { Interrupted } from '../../src/errors';
import { ProjectionApplyError } from '../../src/projector/runner';
import { PspError } from '../../src/psp/errors';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Every error the command line shows is one of recon's (src/errors.ts): it prints the message and the code,
 * never a stack for an expected error nor a secret, and exits with the code of the error's kind
 * (src/cli/errors.ts, README "Exit codes"). One command per kind, through the real entry point.
 */

const BIN = path.resolve('bin/recon.mjs');
const SECRET = 'Db_Pw_0f_TheTest';
// nothing listens there
const NO_DATABASE = `postgres://recon:${SECRET}@127.0.0.1:9/recon`;
const tmp = mkdtempSync(path.join(tmpdir(), 'recon-cli-exit-'));
let db: TestDatabase;

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
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl, extra: { RECON_LOG_LEVEL: 'error', RECON_OUT_DIR: tmp, ...extra } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A stack frame as V8 prints it. */
const STACK_FRAME = /^\s+at /m;

function expectShown(r: { code: number | null; stdout: string; stderr: string }, code: number, errorCode: string) {
  expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code, stdout: '' });
  expect(r.stderr).toContain(`(${errorCode})`);
  expect(r.stderr).not.toMatch(STACK_FRAME);
  expect(r.stderr).not.toContain(SECRET);
}

describe('recon exits with the code of the error kind', () => {
  it('usage: an option refused, before the database is reached', async () => {
    const r = await recon(['sync', '--incremental', '--from', '2025-01-01'], NO_DATABASE);
    expectShown(r, EXIT_CODE.usage, 'USAGE');
    expect(r.stderr).toContain('--incremental takes no --from/--to');
  });

  it('usage: an unknown projection name, before the database is reached', async () => {
    const r = await recon(['project', '--only', 'no_such_model'], NO_DATABASE);
    expectShown(r, EXIT_CODE.usage, 'USAGE');
    expect(r.stderr).toContain('--only: unknown projection no_such_model');
  });

  it("usage: an option commander does not know, a required one missing, an unknown command: in recon's form", async () => {
    const cases: Array<[string[], string]> = [
      [['sync', '--bogus'], "recon: unknown option '--bogus' (USAGE)\n"],
      [['payouts'], "recon: required option '--month <YYYY-MM>' not specified (USAGE)\n"],
      [['no-such-command'], "recon: unknown command 'no-such-command' (USAGE)\n"],
      // a suggestion stays on its own line, the code on the message's
      [['sync', '--bogs'], "recon: unknown option '--bogs' (USAGE)\n(Did you mean --pos?)\n"],
    ];
    for (const [args, first] of cases) {
      const r = await recon(args, NO_DATABASE);
      expectShown(r, EXIT_CODE.usage, 'USAGE');
      expect(r.stderr.startsWith(first), r.stderr).toBe(true);
      expect(r.stderr).toContain('(run with --help for usage)');
    }
  });

  it('configuration: an invalid variable, every problem named', async () => {
    const r = await recon(['project'], NO_DATABASE, { RECON_TIMEZONE: 'Mars/Olympus' });
    expectShown(r, EXIT_CODE.configuration, 'CONFIG_INVALID');
    expect(r.stderr).toContain('RECON_TIMEZONE');
  });

  it('configuration: a command that needs a PSP project, with none configured', async () => {
    const r = await recon(['sync', '--incremental'], db.url);
    expectShown(r, EXIT_CODE.configuration, 'NOT_CONFIGURED');
  }, 60_000);

  it('unavailable: the database cannot be reached, and its password is not shown', async () => {
    const r = await recon(['project'], NO_DATABASE);
    expectShown(r, EXIT_CODE.unavailable, 'DATABASE_UNAVAILABLE');
    expect(r.stderr).toContain('the database cannot be reached');
  }, 60_000);

  it('unavailable: the demo, whose sandbox is up before the database is reached, ends (it hung, its servers open)', async () => {
    const r = await recon(
      ['demo', '--payments', '10', '--month', '2026-09', '--out', path.join(tmp, 'demo')],
      NO_DATABASE,
    );
    expect(r.code, r.stderr).toBe(EXIT_CODE.unavailable);
    expect(r.stderr).toMatch(/the database cannot be reached.*\(DATABASE_UNAVAILABLE\)/);
    expect(r.stderr).not.toContain(SECRET);
  }, 60_000);

  it('data: an orders file with a bad record, naming file, line and field; nothing imported', async () => {
    const file = path.join(tmp, 'orders.csv');
    writeFileSync(file, 'order_id,amount,currency,created_at,split\no-1,10.001,EUR,2025-01-05T10:00:00Z,\n');
    const r = await recon(['orders', 'import', file], db.url);
    expectShown(r, EXIT_CODE.data, 'ORDERS_FILE_INVALID');
    expect(r.stderr).toContain('(ORDERS_FILE_INVALID):\n  orders.csv:2 (field amount)');
    expect(r.stderr).toContain('nothing imported');
  }, 60_000);

  it('data: an orders file that cannot be read, refused before the database is reached', async () => {
    const r = await recon(['orders', 'import', path.join(tmp, 'missing.csv')], NO_DATABASE);
    expectShown(r, EXIT_CODE.data, 'ORDERS_FILE_UNREADABLE');
    expect(r.stderr).toContain(`${path.join(tmp, 'missing.csv')}: cannot read`);
  });

  it('data: a malformed sub-merchant directory, naming file, line and column', async () => {
    const dir = path.join(tmp, 'directory');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'a.csv'), 'sub_merchant_id,name,reserve_hold_days\nsm 1,Acme,30\n');
    const r = await recon(['config'], NO_DATABASE, { RECON_SUB_MERCHANTS: dir });
    expectShown(r, EXIT_CODE.data, 'SUB_MERCHANT_DIRECTORY_INVALID');
    expect(r.stderr).toContain(`${path.join(dir, 'a.csv')}:2 (column sub_merchant_id)`);
  });
});

describe('the kind of an error that reaches the command line', () => {
  it('an error that is not recon’s is internal: code INTERNAL, exit 70, with its stack for the bug report', () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let exit: number;
    try {
      exit = reportError(new TypeError('x is undefined'));
    } finally {
      spy.mockRestore();
    }
    expect(exit).toBe(EXIT_CODE.internal);
    expect(written[0]).toBe('recon: x is undefined (INTERNAL)\n');
    expect(written.join('')).toMatch(STACK_FRAME);
  });

  it('an internal error caused by a lost connection is the database being unavailable', () => {
    const lost = Object.assign(new Error('connection ended'), { code: 'CONNECTION_ENDED' });
    const e = new ProjectionApplyError('payments', 'build_1', '1', '9', lost);
    expect(asReconError(e)).toMatchObject({ error: { code: 'PROJECTION_APPLY_FAILED' }, kind: 'unavailable' });
  });

  it('a PSP refusing the credentials is configuration; throttling is unavailable; a refused request is data', () => {
    const at = (status: number) => asReconError(new PspError('PSP_HTTP_ERROR', 'x', { status, endpoint: 'e' })).kind;
    expect([at(401), at(403), at(429), at(503), at(400), at(404)]).toEqual([
      'configuration',
      'configuration',
      'unavailable',
      'unavailable',
      'data',
      'data',
    ]);
  });

  it('a port that is taken is the configuration’s', () => {
    const taken = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:8080'), {
      code: 'EADDRINUSE',
      syscall: 'listen',
    });
    expect(asReconError(taken)).toMatchObject({ error: { code: 'PORT_UNAVAILABLE' }, kind: 'configuration' });
  });

  it('an abort by a signal is an interruption, whatever wait it cut short', () => {
    const cut = new Interrupted('interrupted by SIGTERM while waiting for lock /x/pg.lock');
    expect(asReconError(cut)).toMatchObject({ error: { code: 'INTERRUPTED' }, kind: 'interrupted' });
    expect(EXIT_CODE.interrupted).toBe(130);
  });

  it('every kind has its own exit code, none of them 0, 1 (some items failed) or 3 (a job run skipped)', () => {
    const codes = Object.values(EXIT_CODE);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect([0, 1, 3]).not.toContain(c);
  });
});
