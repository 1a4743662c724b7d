import { describe, expect, it } from 'vitest';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { useTestStore } from '../support/db';
import { tempFile } from '../ingest/bank/support';
import { type BankCase, bankCases, EUR, type Outcome, sequenceCases } from './bank-files.cases';

/**
 * Every case of the bank corpus through `recon bank import`'s code on a real PostgreSQL event store: a
 * refusal names the file, the line (and element or column) and the problem, and leaves the store exactly as
 * it was (events counted before and after); an accepted file books its entries with the documented value.
 * Then the projections run to the end over everything the corpus let in.
 */

const t = useTestStore();

async function eventCount(): Promise<number> {
  const [r] = await t.db.sql<{ n: string }[]>`select count(*)::text as n from es_events`;
  return Number(r!.n);
}

const importFiles = (files: string[], c: Pick<BankCase, 'mapping' | 'encoding'> = {}) =>
  importBankFiles(t.store, knownEventsOf(t.store, t.db.sql), files, {
    accounts: [EUR],
    mapping: c.mapping,
    encoding: c.encoding,
  });

/** `<file>: <where>: <problem>` out of the refusal's message (its one problem). */
function refusalOf(message: string, file: string): { where: string; problem: string } {
  const lines = message.split('\n');
  expect(lines[0], message).toBe('nothing imported: 1 problem');
  const line = lines[1]!.trim();
  expect(line.startsWith(`${file}: `), `${line} names ${file}`).toBe(true);
  const rest = line.slice(file.length + 2);
  const cut = rest.indexOf(': ');
  return { where: rest.slice(0, cut), problem: rest.slice(cut + 2) };
}

/** Runs an import and checks its outcome; the files of the import are `files`, the one named is `named`. */
async function expectOutcome(
  files: string[],
  named: string,
  expected: Outcome,
  c: Pick<BankCase, 'mapping' | 'encoding'> = {},
) {
  const before = await eventCount();
  const stream = bankAccountStream(EUR.id);
  const streamBefore = (await t.store.readStream(stream)).length;
  const outcome = await importFiles(files, c).then(
    (o) => ({ ok: true as const, o }),
    (e: Error) => ({ ok: false as const, e }),
  );
  if ('refused' in expected) {
    expect(outcome.ok, `accepted although ${expected.refused.problem} was expected`).toBe(false);
    if (outcome.ok) return;
    expect(outcome.e.name).toBe('BankImportRefused');
    const r = refusalOf(outcome.e.message, named);
    if (typeof expected.refused.where === 'string') expect(r.where).toBe(expected.refused.where);
    else expect(r.where).toMatch(expected.refused.where);
    expect(r.problem).toMatch(expected.refused.problem);
    // refusals are short and storable whatever the file held
    expect(outcome.e.message.length).toBeLessThan(1000);
    expect(outcome.e.message).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E]/);
    expect(await eventCount()).toBe(before);
    return;
  }
  expect(outcome.ok, outcome.ok ? '' : outcome.e.message).toBe(true);
  if (!outcome.ok) return;
  const entries = outcome.o.reduce((n, f) => n + f.entries, 0);
  expect(entries).toBe(expected.accepted.entries);
  const events = (await t.store.readStream(stream)).slice(streamBefore);
  const booked = events.filter((e) => e.type === BankEntryBooked.type);
  expect(booked).toHaveLength(expected.accepted.entries);
  if (expected.accepted.field) {
    const [key, value] = expected.accepted.field;
    expect((booked[0]!.data as Record<string, unknown>)[key]).toEqual(value);
  }
  // no replacement character slipped in: every text stored is what the file said
  for (const e of booked) expect(JSON.stringify(e.data)).not.toContain('\ufffd');
  expect(await eventCount()).toBe(before + events.length);
}

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
});
