import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSubMerchantDirectory } from '../../src/ingest/sub-merchants';

/**
 * The sub-merchant directory refused a name given to two ids only when the two were the same code points: "Café"
 * composed (U+00E9) and "Café" decomposed (e + U+0301), "Acme" and "Acme" with a zero-width space, "Acme Ltd" with
 * a no-break space and with a plain one were taken as two sub-merchants, each its own statement, payouts and
 * balance under a name no reader can tell from the other's, the register's money going to whichever matched its
 * bytes. Now a name that prints as another's is refused at the door, naming both lines and how they differ.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = 'sub_merchant_id,name,reserve_hold_days';

function directory(files: Record<string, string[]>): string {
  const at = path.join(dir, Math.random().toString(36).slice(2));
  mkdirSync(at);
  for (const [name, rows] of Object.entries(files))
    writeFileSync(path.join(at, name), `${[HEADER, ...rows].join('\n')}\n`);
  return at;
}

const PAIRS: Array<[string, string, RegExp]> = [
  ['Caf\u00e9 Lviv', 'Cafe\u0301 Lviv', /accented letters are encoded .*NFC and NFD/],
  ['Acme', 'Acme\u200b', /invisible characters or kinds of space \(U\+200B\)/],
  ['Acme Ltd', 'Acme\u00a0Ltd', /invisible characters or kinds of space \(U\+00A0\)/],
  ['Acme Ltd', 'Acme  Ltd', /invisible characters or kinds of space \(spaces\)/],
];

describe('sub-merchant directory: two names that print alike', () => {
  it('are refused, naming the second line, the first and how they differ', () => {
    for (const [first, second, how] of PAIRS) {
      const at = directory({ 'a.csv': [`sm-1,${first},30`, `sm-2,${second},30`] });
      const r = readSubMerchantDirectory(at);
      expect(r.ok, JSON.stringify(second)).toBe(false);
      if (r.ok) continue;
      expect(r.issues).toHaveLength(1);
      expect(r.issues[0]).toMatchObject({ file: path.join(at, 'a.csv'), line: 3, column: 'name' });
      expect(r.issues[0]!.message).toContain(`the name of sm-1 (${path.join(at, 'a.csv')}:2)`);
      expect(r.issues[0]!.message).toMatch(how);
    }
  });

  it('are refused across the files of a directory, and recon config stops naming the line (exit 65)', () => {
    const at = directory({ 'a.csv': ['sm-1,Caf\u00e9 Lviv,30'], 'b.csv': ['sm-2,Cafe\u0301 Lviv,30'] });
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'config'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECON_SUB_MERCHANTS: at },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(65);
    expect(r.stderr).toContain(`${path.join(at, 'b.csv')}:2 (column name): `);
    expect(r.stderr).toContain(`the name of sm-1 (${path.join(at, 'a.csv')}:2)`);
  });

  it('names that read differently stay two sub-merchants, and one name keeps its bytes', () => {
    const at = directory({ 'a.csv': ['sm-1,Caf\u00e9 Lviv,30', 'sm-2,Cafe Lviv,30', 'sm-3,CAF\u00c9 LVIV,30'] });
    const r = readSubMerchantDirectory(at);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.rows.map((x) => x.name)).toEqual(['Caf\u00e9 Lviv', 'Cafe Lviv', 'CAF\u00c9 LVIV']);
    const nfd = readSubMerchantDirectory(directory({ 'a.csv': ['sm-1,Cafe\u0301 Lviv,30'] }));
    expect(nfd.ok && nfd.rows[0]!.name).toBe('Cafe\u0301 Lviv');
  });
});
