import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateHolds, type HoldClaim, type PaymentNet } from '../../src/export/payouts/holds';
import { checkBridge } from '../../src/export/statements/figures';
import { statementPayouts } from '../../src/export/statements/payouts';
import type { StatementFigures } from '../../src/ledger/ledger-queries';
import { entriesFor, netOf, type RowFacts } from '../../src/journal-rules';
import type { EventStore } from '../../src/store/types';

/**
 * For any events (issue 25): payments of several receivers and currencies, each a sale with its fee and
 * reserve, refunds and chargebacks, booked through the journal's own rules, and any discrepancies on them
 * (whole payments or differences, named receiver or not, several on one payment), the money held for a
 * payment never exceeds its net contribution to the month, a difference is never exceeded, nothing negative is
 * held, and the statement still ties: its bridge adds up and amount due = net payable − held.
 */

const TZ = 'UTC';
const MONTH = '2026-10';
const MONTH_END = new Date('2026-11-01T00:00:00Z');
const RECEIVERS = ['Alpha Shop', 'Beta Books', 'Gamma Garden'];
const CURRENCIES = ['UAH', 'EUR'];

const money = fc.bigInt({ min: 1n, max: 500_000n });
const operation = fc.record({
  payment: fc.integer({ min: 0, max: 5 }),
  receiver: fc.constantFrom(...RECEIVERS),
  currency: fc.constantFrom(...CURRENCIES),
  method: fc.constantFrom('purchase', 'purchase', 'refund', 'dispute'),
  share: money,
  feePermille: fc.integer({ min: 0, max: 100 }),
  reservePermille: fc.integer({ min: 0, max: 200 }),
  day: fc.integer({ min: 1, max: 31 }),
  holdDays: fc.integer({ min: 0, max: 60 }),
});
const claim = fc.record({
  payment: fc.integer({ min: 0, max: 6 }),
  receiver: fc.option(fc.constantFrom(...RECEIVERS), { nil: null }),
  difference: fc.option(fc.bigInt({ min: 1n, max: 100_000n }), { nil: null }),
  currency: fc.constantFrom(...CURRENCIES),
});

interface Booked {
  readonly receiver: string;
  readonly currency: string;
  readonly payment: string;
  readonly bookedAt: Date;
  readonly net: bigint;
  readonly lines: ReturnType<typeof entriesFor>[number]['lines'];
}

type Op = typeof operation extends fc.Arbitrary<infer T> ? T : never;

function book(ops: readonly Op[]): Booked[] {
  return ops.flatMap((o, i) => {
    const bookedAt = new Date(Date.UTC(2026, 9, o.day, 10, 0, i));
    const facts: RowFacts = {
      rowKey: `row-${i}`,
      posId: 'pos',
      orderId: `order-${o.payment}`,
      paymentId: `pay-${o.payment}`,
      method: o.method as RowFacts['method'],
      status: 'success',
      receiver: o.receiver,
      currency: o.currency,
      share: o.share,
      fee: (o.share * BigInt(o.feePermille)) / 1000n,
      reserve: (o.share * BigInt(o.reservePermille)) / 1000n,
      bookedAt,
      bookedOn: bookedAt.toISOString().slice(0, 10),
    };
    return entriesFor(facts, o.holdDays, TZ).map((e) => ({
      receiver: o.receiver,
      currency: o.currency,
      payment: facts.paymentId,
      bookedAt: e.bookedAt,
      net: netOf(e.lines),
      lines: e.lines,
    }));
  });
}

/** The month's figures per receiver and currency, as the ledger states them (payable lines booked in it). */
function figuresOf(booked: readonly Booked[]): StatementFigures[] {
  const out = new Map<string, StatementFigures>();
  for (const b of booked.filter((x) => x.bookedAt < MONTH_END)) {
    const k = `${b.receiver}|${b.currency}`;
    const f = out.get(k) ?? {
      subMerchantId: `SM-${b.receiver}`,
      subMerchantName: b.receiver,
      known: true,
      currency: b.currency,
      opening: 0n,
      gross: 0n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 0n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      netPayable: 0n,
      closing: 0n,
      operations: 0,
    };
    const add = { ...f };
    for (const l of b.lines.filter((x) => x.account === 'payable')) {
      if (l.component === 'gross') add.gross -= l.amount;
      if (l.component === 'refund') add.refunds += l.amount;
      if (l.component === 'chargeback') add.chargebacks += l.amount;
      if (l.component === 'fee') add.fees += l.amount;
      if (l.component === 'reserve_held') add.reserveHeld += l.amount;
      if (l.component === 'reserve_released') add.reserveReleased -= l.amount;
    }
    add.netPayable = f.netPayable + b.net;
    add.closing = add.netPayable;
    out.set(k, add);
  }
  return [...out.values()];
}

const noStore = { readStream: async () => [] } as unknown as EventStore;

describe('holds for any events', () => {
  it('never exceed the payment’s net contribution, and the statement ties', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.array(claim, { maxLength: 12 }),
        async (ops, raw) => {
          const booked = book(ops);
          const nets: PaymentNet[] = booked
            .filter((b) => b.bookedAt < MONTH_END)
            .map((b) => ({
              posId: 'pos',
              paymentId: b.payment,
              receiverName: b.receiver,
              currency: b.currency,
              net: b.net,
            }));
          const claims: HoldClaim[] = raw.map((c, i) => ({
            id: `d-${String(i).padStart(2, '0')}`,
            type: c.difference === null ? 'status_mismatch' : 'fee_above_contract',
            reason: 'x',
            posId: 'pos',
            paymentId: `pay-${c.payment}`,
            orderId: null,
            occurredAt: null,
            receiverName: c.receiver,
            currency: c.difference === null ? null : c.currency,
            atMost: c.difference,
          }));
          const held = allocateHolds(claims, nets);

          const contribution = new Map<string, bigint>();
          for (const n of nets) {
            const k = `${n.paymentId}|${n.receiverName}|${n.currency}`;
            contribution.set(k, (contribution.get(k) ?? 0n) + n.net);
          }
          const heldPer = new Map<string, bigint>();
          for (const h of held) {
            expect(h.amount).toBeGreaterThan(0n);
            const k = `${h.paymentId}|${h.receiverName}|${h.currency}`;
            heldPer.set(k, (heldPer.get(k) ?? 0n) + h.amount);
          }
          for (const [k, v] of heldPer) expect(v).toBeLessThanOrEqual(contribution.get(k) ?? 0n);
          for (const c of claims.filter((x) => x.atMost !== null)) {
            const total = held.filter((h) => h.discrepancyId === c.id).reduce((s, h) => s + h.amount, 0n);
            expect(total).toBeLessThanOrEqual(c.atMost!);
          }
          // a whole-payment claim leaves nothing of what it names unheld
          for (const c of claims.filter((x) => x.atMost === null))
            for (const [k, v] of contribution)
              if (k.startsWith(`${c.paymentId}|${c.receiverName ?? ''}`) && v > 0n) expect(heldPer.get(k)).toBe(v);

          const figures = figuresOf(booked);
          for (const f of figures) checkBridge(f);
          const payouts = await statementPayouts(
            { store: noStore, namesOf: async (id) => [id.slice(3)], recordedHeld: async () => [] },
            { month: MONTH, timezone: TZ, cut: { commit: 1n, prepare: 1n }, figures, runs: [], held, paid: [] },
          );
          for (const p of payouts) {
            const f = figures.find((x) => x.subMerchantId === p.subMerchantId && x.currency === p.currency)!;
            const items = held.filter((h) => `SM-${h.receiverName}` === p.subMerchantId && h.currency === p.currency);
            expect(p.held).toBe(items.reduce((s, h) => s + h.amount, 0n));
            expect(p.amountDue).toBe(f.netPayable - p.held);
            // what is held is part of what the month adds: never more than the receiver's positive nets
            const positive = [...contribution]
              .filter(([k, v]) => v > 0n && k.endsWith(`|${f.subMerchantName}|${f.currency}`))
              .reduce((s, [, v]) => s + v, 0n);
            expect(p.held).toBeLessThanOrEqual(positive);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
