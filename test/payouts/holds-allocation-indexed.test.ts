import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateHolds, type HeldItem, type HoldClaim, type PaymentNet } from '../../src/export/payouts/holds';

/**
 * allocateHolds looks at each claim's own payment's nets only (a 1M month holds some 60,000 claims and 90,000
 * nets: every claim scanning every net took the statements stage past 20 minutes). What it holds is what the
 * scan over every net held: the reference below is that scan, kept as the specification, run against random
 * claims and nets (several points of sale, payments, receivers and currencies; a net's key given twice; claims
 * on a whole payment and on differences, for one receiver or any).
 */

const keyOf = (n: Pick<PaymentNet, 'posId' | 'paymentId' | 'receiverName' | 'currency'>) =>
  [n.posId, n.paymentId, n.receiverName, n.currency].join('\u001f');

function scanningEveryNet(claims: readonly HoldClaim[], nets: readonly PaymentNet[]): HeldItem[] {
  const left = new Map<string, bigint>();
  for (const n of nets) left.set(keyOf(n), (left.get(keyOf(n)) ?? 0n) + n.net);
  for (const [k, v] of left) if (v < 0n) left.set(k, 0n);
  const rows = [...nets].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  const ordered = [...claims].sort(
    (a, b) => Number(a.atMost !== null) - Number(b.atMost !== null) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const out: HeldItem[] = [];
  for (const c of ordered) {
    let budget = c.atMost;
    const seen = new Set<string>();
    for (const n of rows) {
      const k = keyOf(n);
      if (seen.has(k) || n.posId !== c.posId || n.paymentId !== c.paymentId) continue;
      if (
        (c.receiverName !== null && n.receiverName !== c.receiverName) ||
        (c.currency !== null && n.currency !== c.currency)
      )
        continue;
      seen.add(k);
      const available = left.get(k) ?? 0n;
      const amount = budget === null ? available : budget < available ? budget : available;
      if (amount <= 0n) continue;
      left.set(k, available - amount);
      if (budget !== null) budget -= amount;
      out.push({
        discrepancyId: c.id,
        reason: c.reason,
        receiverName: n.receiverName,
        currency: n.currency,
        amount,
        type: c.type,
        orderId: c.orderId,
        paymentId: c.paymentId,
        occurredAt: c.occurredAt,
      });
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return out.sort(
    (a, b) =>
      cmp(a.receiverName, b.receiverName) || cmp(a.currency, b.currency) || cmp(a.discrepancyId, b.discrepancyId),
  );
}

const pos = fc.constantFrom('pos-a', 'pos-b');
const payment = fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p10');
const receiver = fc.constantFrom('Alpha', 'Beta', 'Gamma');
const currency = fc.constantFrom('UAH', 'EUR');
const net = fc.record({
  posId: pos,
  paymentId: payment,
  receiverName: receiver,
  currency,
  net: fc.bigInt({ min: -5_000n, max: 50_000n }),
});
const claim = fc.record({
  id: fc.uuid(),
  type: fc.constantFrom('amount_mismatch', 'fee_mismatch'),
  reason: fc.constant('under investigation'),
  posId: pos,
  paymentId: payment,
  orderId: fc.constant(null),
  occurredAt: fc.constant(null),
  receiverName: fc.option(receiver, { nil: null }),
  currency: fc.option(currency, { nil: null }),
  atMost: fc.option(fc.bigInt({ min: 1n, max: 40_000n }), { nil: null }),
});

describe('allocateHolds, each claim against its own payment', () => {
  it('holds what the scan over every net held, item for item', () => {
    fc.assert(
      fc.property(fc.array(claim, { maxLength: 25 }), fc.array(net, { maxLength: 40 }), (claims, nets) => {
        expect(allocateHolds(claims, nets)).toEqual(scanningEveryNet(claims, nets));
      }),
      { numRuns: 500 },
    );
  });

  it('holds something in the cases drawn (the comparison is not of empty lists)', () => {
    const claims: HoldClaim[] = [
      {
        id: 'b',
        type: 'amount_mismatch',
        reason: 'r',
        posId: 'pos-a',
        paymentId: 'p1',
        orderId: null,
        occurredAt: null,
        receiverName: null,
        currency: null,
        atMost: null,
      },
      {
        id: 'a',
        type: 'fee_mismatch',
        reason: 'r',
        posId: 'pos-a',
        paymentId: 'p1',
        orderId: null,
        occurredAt: null,
        receiverName: 'Alpha',
        currency: 'UAH',
        atMost: 300n,
      },
    ];
    const nets: PaymentNet[] = [
      { posId: 'pos-a', paymentId: 'p1', receiverName: 'Alpha', currency: 'UAH', net: 1_000n },
      { posId: 'pos-a', paymentId: 'p1', receiverName: 'Beta', currency: 'UAH', net: 500n },
      { posId: 'pos-b', paymentId: 'p1', receiverName: 'Alpha', currency: 'UAH', net: 700n },
    ];
    const held = allocateHolds(claims, nets);
    expect(held.map((h) => [h.discrepancyId, h.receiverName, h.amount])).toEqual([
      ['b', 'Alpha', 1_000n],
      ['b', 'Beta', 500n],
    ]);
    expect(held).toEqual(scanningEveryNet(claims, nets));
  });
});
