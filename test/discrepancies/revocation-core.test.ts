import { describe, expect, it } from 'vitest';
import type { DiscrepancyRow } from '../../src/reconciliation/discrepancies/columns';
import { amountInDoubt } from '../../src/reconciliation/discrepancies/amounts';
import { discrepancyId } from '../../src/reconciliation/discrepancies/id';
import {
  applyFindings,
  type Decided,
  type Finding,
  newLifecycle,
  recordAcceptance,
  recordRevocation,
  type Stamp,
  type WaitingAcceptance,
  wholeRows,
} from '../../src/reconciliation/discrepancies/lifecycle';
import { amountInDoubt as summaryAmountInDoubt } from '../../src/reconciliation/discrepancy-summary';

/**
 * The core's side of decisions (src/reconciliation/discrepancies/lifecycle.ts): a revocation takes back the
 * acceptance in force (open again, stamped by the leg's clock, its values no longer frozen), any other changes
 * nothing; an acceptance still waiting for its discrepancy is dropped; a leg judged whole applies acceptances
 * and revocations in turn. And `amount_in_doubt`, stamped on every row from its values.
 */

const finding = (over: Partial<Finding> = {}): Finding => ({
  id: discrepancyId('fee_mismatch', 'pos-1:pay-1:purchase:0\n'),
  type: 'fee_mismatch',
  posId: 'pos-1',
  paymentId: 'pay-1',
  orderId: null,
  method: 'purchase',
  operationKey: 'pos-1:pay-1:purchase:0',
  receiverName: null,
  subMerchantIds: ['sm-1'],
  currency: 'UAH',
  occurredAt: '2025-03-01T10:00:00.000Z',
  values: { register: { merchant_fee: '100' }, period: { merchant_fee: '120' } },
  evidence: ['e1', 'e2'],
  ...over,
});
const at = (hour: number, eventId: string): Stamp => ({
  now: `2025-03-02T${String(hour).padStart(2, '0')}:00:00.000Z`,
  eventId,
});
const acceptance = (eventId: string, hour = 3) => ({
  acceptedBy: 'Olena',
  note: 'fine',
  acceptedAt: `2025-03-02T${String(hour).padStart(2, '0')}:30:00.000Z`,
  eventId,
});

describe('a revocation in the core', () => {
  it('opens the accepted row again, stamped by the leg, and the next findings update or resolve it', () => {
    const f = finding();
    const rows = new Map<string, DiscrepancyRow>();
    const lc = newLifecycle();
    applyFindings(lc, rows, [f], at(1, 'ev-open'));
    recordAcceptance(lc, rows.get(f.id), { discrepancyId: f.id, ...acceptance('acc-1') });
    const wider = finding({ values: { register: { merchant_fee: '100' }, period: { merchant_fee: '180' } } });
    // frozen while accepted
    applyFindings(lc, rows, [wider], at(4, 'ev-wider'));
    expect(rows.get(f.id)).toMatchObject({ status: 'accepted', amount_in_doubt: 20n, values: f.values });

    lc.changed.clear();
    const taken = recordRevocation(
      lc,
      rows.get(f.id),
      { discrepancyId: f.id, acceptance: 'acc-1', eventId: 'rev-1' },
      at(5, 'rev-1'),
    );
    expect(taken).toBe(true);
    expect([...lc.changed.keys()]).toEqual([f.id]);
    expect(rows.get(f.id)).toMatchObject({
      status: 'open',
      accepted_at: null,
      accepted_by: null,
      accepted_note: null,
      accepted_by_event: null,
      updated_at: '2025-03-02T05:00:00.000Z',
      updated_by_event: 'rev-1',
      detected_by_event: 'ev-open',
    });
    // unfrozen: the next finding updates its values and amount in doubt; then, no longer found, resolved
    applyFindings(lc, rows, [wider], at(6, 'ev-judged'));
    expect(rows.get(f.id)).toMatchObject({ status: 'open', values: wider.values, amount_in_doubt: 80n });
    applyFindings(lc, rows, [], at(7, 'ev-agree'));
    expect(rows.get(f.id)).toMatchObject({ status: 'resolved', resolved_by_event: 'ev-agree' });
  });

  it('any revocation but of the acceptance in force changes nothing (an old one, a repeated one, an unknown id)', () => {
    const f = finding();
    const rows = new Map<string, DiscrepancyRow>();
    const lc = newLifecycle();
    applyFindings(lc, rows, [f], at(1, 'ev-open'));
    recordAcceptance(lc, rows.get(f.id), { discrepancyId: f.id, ...acceptance('acc-1') });
    const accepted = structuredClone(rows.get(f.id));
    lc.changed.clear();
    for (const named of ['acc-0', 'not-an-acceptance'])
      expect(
        recordRevocation(lc, rows.get(f.id), { discrepancyId: f.id, acceptance: named, eventId: 'r' }, at(5, 'r')),
      ).toBe(false);
    expect(rows.get(f.id)).toEqual(accepted);
    expect(lc.changed.size).toBe(0);
    const v = { discrepancyId: f.id, acceptance: 'acc-1', eventId: 'rev-1' };
    expect(recordRevocation(lc, rows.get(f.id), v, at(5, 'rev-1'))).toBe(true);
    const reopened = structuredClone(rows.get(f.id));
    expect(recordRevocation(lc, rows.get(f.id), { ...v, eventId: 'rev-2' }, at(6, 'rev-2'))).toBe(false);
    expect(rows.get(f.id)).toEqual(reopened);
    // a discrepancy that exists nowhere, in a leg that keeps no waiting acceptances
    expect(recordRevocation(newLifecycle(), undefined, v, at(6, 'rev-1'))).toBe(false);
  });

  it('an acceptance still waiting for its discrepancy is dropped: the discrepancy opens when found', () => {
    const f = finding();
    const stored: WaitingAcceptance = { discrepancyId: f.id, ...acceptance('acc-1'), stored: true };
    const lc = newLifecycle(new Map([[f.id, stored]]));
    recordRevocation(lc, undefined, { discrepancyId: f.id, acceptance: 'acc-other', eventId: 'r0' }, at(2, 'r0'));
    expect(lc.waiting!.has(f.id)).toBe(true);
    recordRevocation(lc, undefined, { discrepancyId: f.id, acceptance: 'acc-1', eventId: 'r1' }, at(2, 'r1'));
    expect(lc.waiting!.has(f.id)).toBe(false);
    // stored before this batch: its row in the waiting table is deleted
    expect([...lc.applied]).toEqual([f.id]);
    // accepted again while still not found: that one waits
    recordAcceptance(lc, undefined, { discrepancyId: f.id, ...acceptance('acc-2', 4) });
    expect(lc.waiting!.get(f.id)).toMatchObject({ eventId: 'acc-2', stored: false });
    recordRevocation(lc, undefined, { discrepancyId: f.id, acceptance: 'acc-2', eventId: 'r2' }, at(5, 'r2'));
    const rows = new Map<string, DiscrepancyRow>();
    applyFindings(lc, rows, [f], at(6, 'ev-found'));
    expect(rows.get(f.id)).toMatchObject({ status: 'open', accepted_by_event: null });
  });

  it('a leg judged whole applies acceptances and revocations in turn', () => {
    const f = finding();
    const detected = at(1, 'ev-found');
    const ended = at(4, 'ev-paid');
    const decided = (...d: Decided[]) => d;
    const accepted = (id: string, hour: number): Decided => ({ kind: 'accepted', ...acceptance(id, hour) });
    const revoked = (of: string, id: string, hour: number): Decided => ({
      kind: 'revoked',
      acceptance: of,
      eventId: id,
      revokedAt: `2025-03-02T${String(hour).padStart(2, '0')}:00:00.000Z`,
    });
    const [reopened, stillOpen, resolvedAfter, again, ignored] = wholeRows(
      [
        { ...f, id: 'a', detected, resolved: null },
        { ...f, id: 'b', detected, resolved: null },
        { ...f, id: 'c', detected, resolved: ended },
        { ...f, id: 'd', detected, resolved: null },
        { ...f, id: 'e', detected, resolved: null },
      ],
      new Map([
        ['a', decided(accepted('acc-a', 2), revoked('acc-a', 'rev-a', 5))],
        ['b', decided(revoked('acc-x', 'rev-b', 5))],
        ['c', decided(accepted('acc-c', 2), revoked('acc-c', 'rev-c', 6))],
        ['d', decided(accepted('acc-d1', 2), revoked('acc-d1', 'rev-d', 5), accepted('acc-d2', 7))],
        ['e', decided(accepted('acc-e1', 2), accepted('acc-e2', 3), revoked('acc-e2', 'rev-e', 5))],
      ]),
    );
    expect(reopened).toMatchObject({ status: 'open', accepted_by_event: null, updated_by_event: 'rev-a' });
    expect(stillOpen).toMatchObject({ status: 'open', updated_by_event: 'ev-found' });
    // ended before the revocation: resolved again, at the revocation (the later of the two)
    expect(resolvedAfter).toMatchObject({
      status: 'resolved',
      resolved_by_event: 'rev-c',
      resolved_at: '2025-03-02T06:00:00.000Z',
    });
    expect(again).toMatchObject({ status: 'accepted', accepted_by_event: 'acc-d2' });
    // the second acceptance was never in force: its revocation changes nothing
    expect(ignored).toMatchObject({ status: 'accepted', accepted_by_event: 'acc-e1' });
  });
});

describe('amount_in_doubt on every row', () => {
  it('is the amount in doubt of its type and values, the same the readers compute', () => {
    const rows = new Map<string, DiscrepancyRow>();
    const short = finding({
      id: 'short',
      type: 'settlement_short',
      values: { expected: '19800', received: '15000', shortfall: '4800' },
    });
    const count = finding({ id: 'count', type: 'report_count_mismatch', values: { announced_count: 3 } });
    applyFindings(newLifecycle(), rows, [finding(), short, count], at(1, 'ev'));
    expect([...rows.values()].map((r) => [r.id, r.amount_in_doubt])).toEqual([
      [finding().id, 20n],
      ['short', 4_800n],
      ['count', null],
    ]);
    for (const r of rows.values()) expect(r.amount_in_doubt).toBe(summaryAmountInDoubt(r));
    expect(amountInDoubt).toBe(summaryAmountInDoubt);
  });
});
