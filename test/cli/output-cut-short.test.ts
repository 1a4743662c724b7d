import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `recon … | head` and `recon … 2>&1 | head`: the reader leaves after a few bytes. Every command runs main's
 * handler (`outputMayBeCutShort`): the EPIPE, on stdout or on stderr, is taken as a SIGPIPE, so the command
 * stops as by a signal, runs its cleanup and ends with 141, as a Unix filter does. Without the handler, the
 * EPIPE reaches the process's last handler, which exits 1 at once, the cleanup skipped: the fixture shows
 * both (the real binary: test/discrepancies/list-in-batches.test.ts).
 */

const FIXTURE = path.join(import.meta.dirname, 'fixtures/write-much.ts');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-cut-short-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cutShort(mode: 'net' | 'none', redirect: '' | '2>&1') {
  const mark = path.join(dir, `${mode}-${redirect ? 'both' : 'stdout'}`);
  const r = spawnSync(
    'bash',
    [
      '-c',
      `set -o pipefail; '${process.execPath}' --import tsx '${FIXTURE}' ${mode} '${mark}' ${redirect} | head -c 10 >/dev/null`,
    ],
    { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, stderr: r.stderr, cleanedUp: existsSync(mark) };
}

describe('a reader that leaves', () => {
  it('of stdout: the command runs its cleanup (its logs still shown) and ends with 141', () => {
    expect(cutShort('net', '')).toEqual({
      status: 141,
      stderr: '{"level":"info","msg":"a log line"}\n',
      cleanedUp: true,
    });
  });

  it('of stdout and stderr (2>&1 | head): the log line after it goes nowhere, the same end', () => {
    expect(cutShort('net', '2>&1')).toEqual({ status: 141, stderr: '', cleanedUp: true });
  });

  it('without the handler: exit 1 at the EPIPE, the cleanup skipped (what the handler prevents)', () => {
    const r = cutShort('none', '');
    expect(r.stderr).toContain('EPIPE');
    expect({ status: r.status, cleanedUp: r.cleanedUp }).toEqual({ status: 1, cleanedUp: false });
  });
});
