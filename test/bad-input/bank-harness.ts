import { expect } from 'vitest';
import { BankEntryBooked, bankAccountStream } from '../../src/events/bank-events';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import type { TestStore } from '../support/db';
import { type BankCase, EUR, type Outcome } from './bank-files.cases';

/**
 * The import of the bank corpus and its check (test/bad-input/bank-files.test.ts, bank-generated.test.ts):
 * `recon bank import`'s code on a real event store, the events counted before and after.
 */
export function bankDoors(t: TestStore) {
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
  return { importFiles, expectOutcome, eventCount };
}
