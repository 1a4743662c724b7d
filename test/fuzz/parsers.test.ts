import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizedPeriodRecord, normalizedRegisterRecord, normalizedWebhook } from '../../src/events/ingest-events';
import { jsonArrayItems } from '../../src/psp/json';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { NOW, recordText, type RecordKind } from '../bad-input/records.cases';
import { UNSTORABLE, amountText, oracleMinor } from './oracle';

const RUN = { numRuns: 1500, interruptAfterTimeLimit: 4000 } as const;

const parsers = {
  register: { parse: (t: string) => parseRegisterRecord(t, { now: NOW }), schema: normalizedRegisterRecord },
  period: { parse: (t: string) => parsePeriodRecord(t, { now: NOW }), schema: normalizedPeriodRecord },
  webhook: { parse: (t: string) => parseWebhookPayload(t, { now: NOW }), schema: normalizedWebhook },
} as const;
const KINDS = Object.keys(parsers) as RecordKind[];

/** A parse result is always one of the two shapes, never an exception; an accepted value is event data. */
function checkShape(kind: RecordKind, text: string) {
  const r = parsers[kind].parse(text);
  if (r.ok) {
    expect(parsers[kind].schema.parse(r.value)).toEqual(r.value);
    expect(JSON.parse(JSON.stringify(r.value))).toEqual(r.value);
  } else {
    expect(typeof r.field).toBe('string');
    expect(r.field.length).toBeGreaterThan(0);
    expect(typeof r.reason).toBe('string');
    expect(`${r.field}${r.reason}`).not.toMatch(UNSTORABLE);
  }
  return r;
}

/** A JSON fragment for a field: sometimes an amount, sometimes anything JSON, sometimes not JSON at all. */
const fragment = fc.oneof(
  { weight: 3, arbitrary: amountText.map((t) => JSON.stringify(t)) },
  { weight: 2, arbitrary: amountText.filter((t) => /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map((s) => JSON.stringify(s)) },
);

const FIELDS: Record<RecordKind, string[]> = {
  register: [
    'paymentId',
    'amount',
    'originalAmount',
    'customerFee',
    'merchantFee',
    'receiverAmount',
    'receiverFee',
    'reserveAmount',
    'currency',
    'method',
    'status',
    'dateTime',
    'orderId',
    'receiverName',
    'brandNew',
  ],
  period: [
    'paymentId',
    'amount',
    'customerFee',
    'merchantFee',
    'currency',
    'method',
    'status',
    'dateTime',
    'orderId',
    'brandNew',
  ],
  webhook: [
    'payment_id',
    'amount',
    'currency',
    'method',
    'status',
    'created_at',
    'processed_at',
    'fee',
    'recurring',
    'order_id',
    'operation_id',
    'brand_new',
  ],
};

/** A valid record with some fields replaced by random fragments or removed. */
const mutated = (kind: RecordKind) =>
  fc
    .dictionary(fc.constantFrom(...FIELDS[kind]), fc.option(fragment, { nil: undefined, freq: 6 }), { maxKeys: 4 })
    .map((over) => ({ over, text: recordText(kind, over) }));

/** The amount text inside a fragment: a JSON string's content or a JSON number's text; else undefined. */
function amountTextOf(fragment: string): string | undefined {
  try {
    const v = JSON.parse(fragment);
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return fragment.trim();
  } catch {
    return undefined;
  }
  return undefined;
}

describe('record parsers under fuzzing (property)', () => {
  for (const kind of KINDS) {
    it(`${kind}: arbitrary text and JSON never throw`, () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.string({ maxLength: 60 }),
            fc.json({ maxDepth: 4 }),
            fc
              .jsonValue({ maxDepth: 4 })
              .map((v) => JSON.stringify({ ...(typeof v === 'object' && v && !Array.isArray(v) ? v : { v }) })),
          ),
          (text) => {
            checkShape(kind, text);
          },
        ),
        RUN,
      );
    });

    it(`${kind}: mutated valid records never throw, and an accepted amount equals the decimal oracle`, () => {
      fc.assert(
        fc.property(mutated(kind), ({ over, text }) => {
          const r = checkShape(kind, text);
          if (!r.ok) return;
          if ('amount' in over) {
            const f = over.amount;
            const value = (r.value as { amount: string | null }).amount;
            if (f === undefined) {
              expect(value).toBeNull(); // only a register row may omit its amount
              return;
            }
            if (f.trim() === 'null') {
              expect(value).toBeNull(); // only a register row may have a null amount
              return;
            }
            const t = amountTextOf(f);
            // Accepted means: given as a JSON string or number whose text the oracle reads exactly the same.
            expect(t, `accepted amount fragment ${f}`).toBeDefined();
            if (t === '') expect(value).toBeNull();
            else expect(value).toBe(oracleMinor(t!));
          }
        }),
        RUN,
      );
    });
  }
});

describe('jsonArrayItems under fuzzing (property)', () => {
  const spaces = fc.string({ unit: fc.constantFrom(' ', '\n', '\t', '\r'), maxLength: 3 });
  const body = fc.tuple(
    fc.array(fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(undefined, 1, 2, '\t')), { maxLength: 12 }),
    fc.array(spaces, { minLength: 30, maxLength: 30 }),
    fc.boolean(),
  );
  const chunkSizes = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 });

  async function* chunked(bytes: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
    let i = 0;
    for (let n = 0; i < bytes.length; n++) {
      const size = sizes[n % sizes.length]!;
      yield bytes.subarray(i, i + size);
      i += size;
    }
  }

  it('gives back exactly the elements, whatever the whitespace and the chunking', async () => {
    await fc.assert(
      fc.asyncProperty(body, chunkSizes, async ([elements, ws, wrapped], sizes) => {
        const texts = elements.map(([v, indent]) => JSON.stringify(v, null, indent) ?? 'null');
        const sp = (i: number) => ws[i % ws.length]!;
        let inner = sp(0) + '[' + sp(1);
        texts.forEach((t, i) => {
          inner += (i > 0 ? sp(i + 2) + ',' + sp(i + 3) : '') + t;
        });
        inner += sp(4) + ']' + sp(5);
        const doc = wrapped
          ? `{${sp(6)}"count"${sp(7)}:${sp(8)}${texts.length},"meta":{"list":[1,[2]]},"records":${inner}}${sp(9)}`
          : inner;
        const got: string[] = [];
        for await (const t of jsonArrayItems(chunked(new TextEncoder().encode(doc), sizes))) got.push(t);
        expect(got).toEqual(texts);
        expect(got.map((t) => JSON.parse(t))).toEqual(texts.map((t) => JSON.parse(t)));
      }),
      { numRuns: 400, interruptAfterTimeLimit: 4000 },
    );
  });

  it('a truncated body always throws (never yields a partial element as complete)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        async (elements, cut) => {
          const doc = JSON.stringify(elements);
          const at = cut % doc.length; // strictly shorter than the document
          const got: string[] = [];
          let threw = false;
          try {
            for await (const t of jsonArrayItems(chunked(new TextEncoder().encode(doc.slice(0, at)), [7]))) got.push(t);
          } catch {
            threw = true;
          }
          expect(threw).toBe(true);
          // Whatever came out before the error was a whole element of the original.
          got.forEach((t, i) => {
            expect(JSON.parse(t)).toEqual(JSON.parse(JSON.stringify(elements[i])));
          });
        },
      ),
      { numRuns: 400, interruptAfterTimeLimit: 3000 },
    );
  });
});
