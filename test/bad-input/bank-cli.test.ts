import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { tempFile } from '../ingest/bank/support';
import { camt, csv, csvMapping, EUR, lineOf, mt940 } from './bank-files.cases';

/**
 * `recon bank import FILE` as a person runs it, on the doors issue 23 found open: a refused file exits with
 * the data exit code (65) and a message naming the file and the line, the event store keeps what it had,
 * and `recon project` then runs to the end (exit 0) on what was let in.
 */

const RUN_MS = 180_000;
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = tempFile('cli-doors-config.json', '');
  writeFileSync(config, JSON.stringify({ bank: { accounts: [{ id: EUR.id, currency: 'EUR', role: 'payouts' }] } }));
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_CONFIG: config } });
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

async function events(): Promise<number> {
  const [r] = await db.sql<{ n: string }[]>`select count(*)::text as n from es_events`;
  return Number(r!.n);
}

describe('recon bank import at the doors', () => {
  it('refuses with exit 65 naming file and line, stores nothing; `recon project` then completes', {
    timeout: 900_000,
  }, async () => {
    expect((await runRecon(['migrate'], env, RUN_MS)).code).toBe(0);
    const zeroDay = camt('CLI-ZERO').replace('<BookgDt><Dt>2025-06-01</Dt>', '<BookgDt><Dt>0000-01-01</Dt>');
    const nul = mt940('CLI-NUL', { remittance: 'R\u0000X' });
    const mapping = tempFile('cli-doors.mapping.json', JSON.stringify(csvMapping('CLI-CSV')));
    const refusedFiles: [string[], string, RegExp][] = [
      [
        [tempFile('cli-zero.xml', zeroDay)],
        'cli-zero.xml',
        /line 9, column \d+ \(Stmt\[0\]\/Ntry\/BookgDt\/Dt entry 1\): date 0000-01-01 is before 2000-01-01/,
      ],
      [
        [tempFile('cli-nul.sta', nul)],
        'cli-nul.sta',
        new RegExp(`line ${lineOf(nul, 'R\u0000')}: a NUL character at character \\d+`),
      ],
      [
        ['--mapping', mapping, tempFile('cli-zero.csv', csv('CLI-CSV', { Buchungstag: '01.01.0000' }))],
        'cli-zero.csv',
        /line 2, column "Buchungstag": date 0000-01-01 is before 2000-01-01/,
      ],
      [
        [
          tempFile(
            'cli-evil.xml',
            camt('CLI-EVIL').replace('urn:iso:std:iso:20022:tech:xsd:camt.053.001.08', 'urn:evil'),
          ),
        ],
        'cli-evil.xml',
        /line 3, column \d+ \(Document\/BkToCstmrStmt\): namespace "urn:evil" is not a camt.053 statement/,
      ],
    ];
    const before = await events();
    for (const [args, name, message] of refusedFiles) {
      const r = await runRecon(['bank', 'import', ...args], env, RUN_MS);
      expect(r.code, `${name}: ${r.stderr}`).toBe(65);
      expect(r.stderr).toContain(name);
      expect(r.stderr).toMatch(message);
      // the terminal is never given the NUL or a control character the file held
      expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000B-\u001F]/);
      expect(await events()).toBe(before);
    }

    // a file in windows-1252, told so, is read as such; an encoding recon cannot decode is a usage error
    const latin = tempFile('cli-latin.sta', Buffer.from(mt940('CLI-LATIN', { name: 'M\u00fcller' }), 'latin1'));
    const undeclared = await runRecon(['bank', 'import', latin], env, RUN_MS);
    expect(undeclared.code).toBe(65);
    expect(undeclared.stderr).toMatch(/cli-latin.sta: line \d+: bytes that are not UTF-8 \(0xFC/);
    const bad = await runRecon(['bank', 'import', '--encoding', 'x-evil', latin], env, RUN_MS);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--encoding: not an encoding recon can decode');
    const ok = await runRecon(['bank', 'import', '--encoding', 'windows-1252', latin], env, RUN_MS);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/entries 2 new/);
    expect(await events()).toBe(before + 3);

    // bank.encoding in RECON_CONFIG reads MT940 and CSV files without --encoding
    const configured = tempFile('cli-doors-config-1252.json', '');
    writeFileSync(
      configured,
      JSON.stringify({
        bank: { encoding: 'windows-1252', accounts: [{ id: EUR.id, currency: 'EUR', role: 'payouts' }] },
      }),
    );
    const latin2 = tempFile('cli-latin2.sta', Buffer.from(mt940('CLI-LAT2', { name: 'J\u00e4ger' }), 'latin1'));
    const viaConfig = await runRecon(['bank', 'import', latin2], { ...env, RECON_CONFIG: configured }, RUN_MS);
    expect(viaConfig.code, viaConfig.stderr).toBe(0);
    expect(await events()).toBe(before + 6);

    const project = await runRecon(['project'], env, RUN_MS);
    expect(project.code, project.stderr).toBe(0);
    const [row] = await db.sql<{ name: string }[]>`
      select counterparty_name as name from recon.bank_entries where statement_id like 'CLI-LATIN%' and direction = 'credit'`;
    expect(row!.name).toBe('M\u00fcller');
    const [row2] = await db.sql<{ name: string }[]>`
      select counterparty_name as name from recon.bank_entries where statement_id like 'CLI-LAT2%' and direction = 'credit'`;
    expect(row2!.name).toBe('J\u00e4ger');
  });
});
