import { describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { useTestStore } from '../support/db';
import { tempFile } from '../ingest/bank/support';
import { camtCases } from './bank-camt.cases';
import { EUR, mt940AndCsvCases, sequenceCases } from './bank-files.cases';
import { bankDoors } from './bank-harness';

/**
 * Every case of the bank corpus through `recon bank import`'s code on a real PostgreSQL event store: a
 * refusal names the file, the line (and element or column) and the problem, and leaves the store exactly as
 * it was (events counted before and after); an accepted file books its entries with the documented value.
 * Then the projections run to the end over everything the corpus let in.
 */

const bankCases = [...camtCases, ...mt940AndCsvCases];
const t = useTestStore();
const { importFiles, expectOutcome } = bankDoors(t);

const EXT = { 'camt.053': 'xml', mt940: 'sta', csv: 'csv' } as const;

describe('bank statement doors: the corpus', () => {
  it('has distinct case names and covers every door', () => {
    expect(new Set(bankCases.map((c) => c.name)).size).toBe(bankCases.length);
    for (const door of ['camt.053', 'mt940', 'csv'] as const)
      expect(bankCases.filter((c) => c.door === door).length).toBeGreaterThan(10);
  });

  for (const [i, c] of bankCases.entries()) {
    it(`${c.door}: ${c.name}`, { timeout: 60_000 }, async () => {
      const file = tempFile(`case-${i}.${EXT[c.door]}`, c.bytes);
      const started = Date.now();
      await expectOutcome([file], file, c.expect, c);
      // a hostile shape is refused at once, never after eating the heap
      expect(Date.now() - started).toBeLessThan(20_000);
    });
  }

  for (const [i, c] of sequenceCases().entries()) {
    it(`statement ids: ${c.name}`, { timeout: 60_000 }, async () => {
      const imports = c.files.map((files) => files.map((f) => tempFile(`seq-${i}-${f.name}`, f.bytes)));
      for (const files of imports.slice(0, -1)) await importFiles(files);
      const last = imports[imports.length - 1]!;
      await expectOutcome(last, last[last.length - 1]!, c.expect);
    });
  }

  it('then every projection runs to the end over what the corpus let in', { timeout: 300_000 }, async () => {
    const bank = bankConfigFrom(
      bankConfigSchema.parse({ accounts: [{ id: EUR.id, currency: 'EUR', role: 'payouts' }] }),
    );
    const started = Date.now();
    const report = await runProjections({
      sql: t.db.sql,
      store: t.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 0,
      bank,
    });
    expect(Date.now() - started).toBeLessThan(240_000);
    expect(report.projections.length).toBeGreaterThan(3);
    for (const p of report.projections) {
      expect(p.status, p.name).toBe('live');
      expect(p.position, p.name).toBe(report.head);
    }
    // the bank read model holds every entry booked, with the texts as stored (a kept bidi override included)
    const booked = (await t.store.readStream(bankAccountStream(EUR.id))).filter((e) => e.type === BankEntryBooked.type);
    expect(booked.length).toBeGreaterThan(20);
    const [rows] = await t.db.sql<{ n: string }[]>`select count(*)::text as n from recon.bank_entries`;
    expect(Number(rows!.n)).toBe(booked.length);
    const kept = await t.db.sql<{ remittance: string }[]>`
      select remittance from recon.bank_entries where remittance = ${'R\u202eX'}`;
    expect(kept.length).toBeGreaterThan(0);
  });
});
