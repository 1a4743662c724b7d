import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnsOf, copyRows, upsertRows } from '../../src/db/bulk-write';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The upsert's values travel as PostgreSQL array literals built by hand (src/db/bulk-write.ts): every text,
 * however it is spelled (quotes, backslashes, braces, commas, the word NULL, long JSON), must come back as
 * it went in, and array-typed cells too. The reconciliation writes a payment's observations (JSON text with
 * dozens of quotes) through it.
 */

const TEXTS = [
  'plain',
  '',
  'NULL',
  'null',
  'a,b',
  '{braces}',
  'say "hi"',
  'back\\slash',
  '\\"both\\"',
  'trailing\\',
  '"',
  'tab\there',
  'line\nbreak',
  'Été à Zürich',
  ' spaced ',
  JSON.stringify([['e1', '12', '3', 'register', null, 'purchase', 'success', 'EUR', '1000', 'x"y\\z']]),
  'x'.repeat(70),
  `[${Array.from({ length: 40 }, (_, i) => JSON.stringify([`id-${i}`, 'a "quoted" \\ value', i])).join(',')}]`,
];

describe('upsertRows: values as array literals', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await db.sql`create table t (k int primary key, v text, tags text[])`;
  });
  afterAll(async () => db.drop());

  it('writes every text and array cell back exactly, inserted and then updated', async () => {
    const columns = columnsOf('k int, v text, tags text[]');
    const rows = TEXTS.map((v, k) => [k, v, [v, 'NULL', 'plain'] as const]);
    await copyRows(
      db.sql as never,
      't',
      ['k', 'v', 'tags'],
      rows.slice(0, 3).map(([k]) => [k, 'old', ['old']]),
    );
    await upsertRows(
      db.sql as never,
      't',
      columns,
      rows as never,
      'on conflict (k) do update set v = excluded.v, tags = excluded.tags',
    );
    const back = await db.sql<{ k: number; v: string; tags: (string | null)[] }[]>`select k, v, tags from t order by k`;
    expect(back.map((r) => r.v)).toEqual(TEXTS);
    expect(back.map((r) => r.tags)).toEqual(TEXTS.map((v) => [v, 'NULL', 'plain']));
  });

  it('writes a null text cell as SQL null', async () => {
    await upsertRows(
      db.sql as never,
      't',
      columnsOf('k int, v text, tags text[]'),
      [[1000, null, []]],
      'on conflict (k) do nothing',
    );
    const [row] = await db.sql<{ v: string | null; tags: string[] }[]>`select v, tags from t where k = 1000`;
    expect(row).toEqual({ v: null, tags: [] });
  });
});
