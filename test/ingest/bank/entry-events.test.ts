import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../../src/canonical';
import { BankEntryBooked } from '../../../src/events/bank-events';
import { newEvent } from '../../../src/events/catalog';
import { entryEvents, occurrenceCounter } from '../../../src/ingest/bank/entry-events';
import { parserFor } from '../../../src/ingest/bank/open-file';
import type { ParsedEntry } from '../../../src/ingest/bank/types';
import type { NewEvent } from '../../../src/store/types';
import { collect, fixture } from './support';

/** The identity of an entry as docs/bank.md "Ids" lists its parts, joined generically. */
function identityByList(entry: ParsedEntry): string {
  const base = entry.bankRef
    ? ['r', entry.bankRef, entry.bookingDate, entry.direction, entry.amount.toString()]
    : [
        'c',
        entry.bookingDate,
        entry.direction,
        entry.amount.toString(),
        entry.valueDate ?? '',
        ...entry.details.map((d) =>
          [d.endToEndId ?? '', d.remittance ?? '', d.counterpartyAccount ?? ''].join('\u0001'),
        ),
        entry.details.length === 0 ? (entry.info ?? '') : '',
      ];
  return base.join('\u0000');
}

/** Each event is newEvent's, with the id of its content {account, entry, occurrence, detail} (first occurrence). */
function expectAsNewEvent(accountId: string, entry: ParsedEntry, events: NewEvent[]): void {
  events.forEach((e, detail) => {
    const reference = newEvent(BankEntryBooked, e.data as never, {
      validated: true,
      idContent: { account: accountId, entry: identityByList(entry), occurrence: 0, detail },
    });
    expect(e.id).toBe(reference.id);
    expect({ ...e, canonicalData: undefined }).toEqual({ ...reference, canonicalData: undefined });
  });
}

/** The entry events carry their data's canonical text, written out by hand: it must be stableStringify's. */
describe('entry events: canonical data', () => {
  it('equals stableStringify of the data for every entry of the published fixtures', async () => {
    const files: [string, 'camt.053' | 'mt940' | 'csv'][] = [
      ['camt053-v02-batch.xml', 'camt.053'],
      ['camt053-v08-prefixed.xml', 'camt.053'],
      ['mt940-dk-structured.sta', 'mt940'],
      ['mt940-swift-envelope.txt', 'mt940'],
      ['statement.csv', 'csv'],
    ];
    const mapping = JSON.parse(readFileSync(fixture('statement.mapping.json'), 'utf8'));
    let checked = 0;
    for (const [name, format] of files) {
      const { entries } = await collect(parserFor(fixture(name), format, mapping));
      for (const entry of entries) {
        const events = entryEvents('ACC', { statementId: 'S', currency: 'EUR' }, entry, occurrenceCounter(false));
        expectAsNewEvent('ACC', entry, events);
        for (const e of events) {
          expect(e.canonicalData).toBe(stableStringify(e.data, true));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('equals stableStringify of the data for any text, null or detail', () => {
    const text = fc.option(fc.string({ unit: 'grapheme' }), { nil: null });
    const detail = fc.record({
      amount: fc.option(fc.bigInt({ min: 0n, max: 10n ** 15n }), { nil: null }),
      direction: fc.constantFrom('credit' as const, 'debit' as const, null),
      endToEndId: text,
      remittance: text,
      counterpartyName: text,
      counterpartyAccount: text,
      isReturn: fc.boolean(),
      transactionCode: text,
      bankRef: text,
      // the charges a camt detail states: carried on the event only when there are some
      charges: fc.option(
        fc.array(
          fc.record({
            amount: fc.bigInt({ min: 0n, max: 10n ** 15n }),
            currency: fc.constantFrom('EUR', 'USD', null),
            direction: fc.constantFrom('credit' as const, 'debit' as const, null),
            included: fc.constantFrom(true, false, null),
          }),
          { maxLength: 2 },
        ),
        { nil: undefined },
      ),
    });
    fc.assert(
      fc.property(
        text,
        text,
        text,
        text,
        fc.boolean(),
        fc.array(detail, { maxLength: 3 }),
        (ref, info, code, value, rev, details) => {
          const entry: ParsedEntry = {
            amount: 100n,
            direction: 'credit',
            currency: null,
            status: 'booked',
            bookingDate: '2025-01-02',
            valueDate: value,
            bankRef: ref,
            isReversal: rev,
            transactionCode: code,
            details,
            info,
            where: '',
          };
          const events = entryEvents(
            'A\\"\u2028',
            { statementId: 'S\t1', currency: 'EUR' },
            entry,
            occurrenceCounter(false),
          );
          expectAsNewEvent('A\\"\u2028', entry, events);
          for (const e of events) expect(e.canonicalData).toBe(stableStringify(e.data, true));
        },
      ),
    );
  });
});
