import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `recon … | head`: the reader of stdout leaves after a few bytes. Every command runs main's handler
 * (`outputMayBeCutShort`), so what is left to write goes nowhere and the command ends as it would have,
 * its cleanup run. Without it the EPIPE reaches the process's last handler, which exits at once with 1:
 * the fixture shows both (the real binary's case is test/discrepancies/list-in-batches.test.ts).
 */

const FIXTURE = path.join(import.meta.dirname, 'fixtures/write-much.ts');

const cutShort = (mode: 'net' | 'none') =>
  spawnSync(
    'bash',
    ['-c', `set -o pipefail; '${process.execPath}' --import tsx '${FIXTURE}' ${mode} | head -c 10 >/dev/null`],
    { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 60_000 },
  );

describe('a reader of stdout that leaves', () => {
  it('ends the command as it would have ended, its cleanup run', () => {
    const r = cutShort('net');
    expect(r.stderr).toBe('after the output\n');
    expect(r.status).toBe(0);
  });

  it('without the handler, exits 1 at the EPIPE and skips the cleanup (what the handler prevents)', () => {
    const r = cutShort('none');
    expect(r.stderr).toContain('EPIPE');
    expect(r.stderr).not.toContain('after the output');
    expect(r.status).toBe(1);
  });
});
