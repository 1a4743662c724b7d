import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db';
import { reconEnv } from '../../../fixtures/psp-env';
import { killAll, runRecon } from '../../faults/support/processes';
import { fixture, tempFile } from './support';

const RUN_MS = 180_000;
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = tempFile('cli-config.json', '');
  writeFileSync(
    config,
    JSON.stringify({
      bank: {
        accounts: [
          { id: 'SE52 3000 0000 0003 1234 5678', currency: 'SEK', role: 'settlement' },
          { id: '10010010/1234567890', currency: 'EUR', role: 'payouts' },
        ],
      },
    }),
  );
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: config } });
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('recon bank', () => {
  it('imports, reports the unknown account, lists statements and entries; refuses a bad --format', {
    timeout: 600_000,
  }, async () => {
    const files = [
      fixture('camt053-v02-batch.xml'),
      fixture('mt940-dk-structured.sta'),
      fixture('camt053-v08-prefixed.xml'),
    ];
    const r = await runRecon(['bank', 'import', ...files], env, RUN_MS);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'unknown account DE89370400440532013000: statement 2025-02-01-0001, 2 entries not booked',
    );
    expect(r.stdout).toMatch(
      /bank import: 3 files; statements 2 new, 0 already known; entries 6 new, 0 already known; 1 statement for unknown accounts/,
    );

    expect((await runRecon(['project'], env, RUN_MS)).code).toBe(0);
    const s = await runRecon(['bank', 'statements'], env, RUN_MS);
    expect(s.stdout).toMatch(
      /10010010\/1234567890\s+STARTUMSE\/00001\/001\s+mt940\s+2017-04-28\s+2017-05-03\s+EUR\s+6670\.54\s+7014\.56\s+3/,
    );
    expect(s.stdout).toContain('2 rows');
    const e = await runRecon(['bank', 'entries', '--account', 'SE5230000000000312345678'], env, RUN_MS);
    expect(e.stdout).toMatch(
      /2025-01-31\s+SE5230000000000312345678\s+-50\.00\s+SEK\s+Sub Merchant One\s+PAYOUT ST-2025-01-0001/,
    );
    expect(e.stdout).toContain('3 rows');

    const bad = await runRecon(['bank', 'import', '--format', 'pdf', files[0]!], env, RUN_MS);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be camt053, mt940 or csv');
  });
});
