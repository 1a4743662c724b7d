import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { runRecon } from '../faults/support/processes';

/**
 * A discrepancy view an earlier version of recon built lacks a column this version reads (a new version's
 * read model is built by the next `recon project` or `recon start`). Until then, `recon discrepancies` says
 * so and names the command, with PostgreSQL's words for the column, instead of an INTERNAL error.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  const built = await runRecon(['project'], reconEnv({ databaseUrl: db.url }), 150_000);
  expect(built.code, built.stderr.slice(-2000)).toBe(0);
  // the view as an earlier version published it: every column but the one added since
  const cols = await db.sql<{ column_name: string }[]>`
    select column_name from information_schema.columns
    where table_schema = 'recon' and table_name = 'discrepancies' order by ordinal_position`;
  expect(cols.map((c) => c.column_name)).toContain('amount_in_doubt_now');
  const older = cols.map((c) => c.column_name).filter((c) => c !== 'amount_in_doubt_now');
  await db.sql.unsafe('alter view recon.discrepancies rename to discrepancies_built_now');
  await db.sql.unsafe(
    `create view recon.discrepancies as select ${older.map((c) => `"${c}"`).join(', ')} from recon.discrepancies_built_now`,
  );
}, 180_000);
afterAll(async () => {
  await db?.drop();
});

describe('recon discrepancies over read models of an earlier version', () => {
  it('says to run recon project, naming the missing column, not an internal error', async () => {
    const r = await runRecon(['discrepancies'], reconEnv({ databaseUrl: db.url }), 60_000);
    expect(r.code).toBe(EXIT_CODE.usage);
    expect(r.stderr).toContain('the read models were built by an earlier version of recon');
    expect(r.stderr).toContain('amount_in_doubt_now');
    expect(r.stderr).toContain('run `recon project` to rebuild them');
    expect(r.stderr).not.toContain('INTERNAL');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
