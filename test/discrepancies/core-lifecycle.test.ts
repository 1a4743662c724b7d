import { describe, expect, it } from 'vitest';
import { uuidV5 } from '../../src/canonical';
import { eventIdFor } from '../../src/events/ids';
import type { DiscrepancyRow } from '../../src/reconciliation/discrepancies/columns';
import { discrepancyId } from '../../src/reconciliation/discrepancies/id';
import {
  applyFindings,
  type Finding,
  newLifecycle,
  recordAcceptance,
  type Stamp,
  type WaitingAcceptance,
  wholeRows,
} from '../../src/reconciliation/discrepancies/lifecycle';
import { DISCREPANCY_TYPES, entryOf } from '../../src/reconciliation/discrepancies/registry';

/**
 * The core's lifecycle (src/reconciliation/discrepancies/lifecycle.ts), given the findings of each run of a
 * leg's rule: statuses, detected_at / resolved_at / updated_at and the events that caused them, re-opening,
 * an update while open, an auditor's acceptance (applied, waiting, or dropped by a leg that keeps none), and the
 * rows of a leg judged whole. And the ids: one function, the text each leg first stored its ids with.
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

/** Runs the rule's findings run after run over one set of rows; returns the rows and what each run changed. */
function runs(seq: ReadonlyArray<[readonly Finding[], Stamp]>, waiting: Map<string, WaitingAcceptance> | null = null) {
  const rows = new Map<string, DiscrepancyRow>();
  const changed: string[][] = [];
  const lc = newLifecycle(waiting);
  for (const [findings, stamp] of seq) {
    lc.changed.clear();
    applyFindings(lc, rows, findings, stamp);
    changed.push([...lc.changed.keys()]);
  }
  return { rows, changed, lc };
}

describe('the discrepancy core: the lifecycle', () => {
  it('opens, keeps, updates, resolves and re-opens, stamped by the run that made each change', () => {
    const f = finding();
    const more = finding({ values: { register: { merchant_fee: '100' }, period: { merchant_fee: '150' } } });
    const { rows, changed } = runs([
      [[f], at(1, 'ev-open')],
      [[f], at(2, 'ev-same')],
      [[more], at(3, 'ev-more')],
      [[], at(4, 'ev-gone')],
      [[], at(5, 'ev-still-gone')],
      [[f], at(6, 'ev-again')],
    ]);
    // a run that finds the same changes nothing, nor does one that finds nothing of a resolved row
    expect(changed).toEqual([[f.id], [], [f.id], [f.id], [], [f.id]]);
    const r = rows.get(f.id)!;
    expect(r).toMatchObject({
      status: 'open',
      detected_at: '2025-03-02T01:00:00.000Z',
      detected_by_event: 'ev-open',
      resolved_at: null,
      resolved_by_event: null,
      updated_at: '2025-03-02T06:00:00.000Z',
      updated_by_event: 'ev-again',
      values: f.values,
      sub_merchant_id: 'sm-1',
      evidence: ['e1', 'e2'],
    });
  });

  it('resolves at the run that no longer finds it, and only rows in scope', () => {
    const a = finding();
    const b = finding({ id: discrepancyId('split_mismatch', 'pos-1:pay-1:purchase:0\n'), type: 'split_mismatch' });
    const rows = new Map<string, DiscrepancyRow>();
    const lc = newLifecycle();
    applyFindings(lc, rows, [a, b], at(1, 'ev-1'));
    // the split is still waiting for its report: out of scope, neither resolved nor re-opened
    applyFindings(lc, rows, [], at(2, 'ev-2'), (r) => r.type !== 'split_mismatch');
    expect(rows.get(a.id)).toMatchObject({
      status: 'resolved',
      resolved_at: '2025-03-02T02:00:00.000Z',
      resolved_by_event: 'ev-2',
      detected_at: '2025-03-02T01:00:00.000Z',
    });
    expect(rows.get(b.id)).toMatchObject({ status: 'open', resolved_at: null, updated_by_event: 'ev-1' });
  });

  it('an acceptance freezes the row (values, evidence, no resolution) but follows what is in doubt now', () => {
    const f = finding();
    const rows = new Map<string, DiscrepancyRow>();
    const lc = newLifecycle();
    applyFindings(lc, rows, [f], at(1, 'ev-1'));
    const acceptance = {
      discrepancyId: f.id,
      acceptedBy: 'auditor@example.com',
      note: 'fee agreed by phone',
      acceptedAt: '2025-03-03T09:00:00.000Z',
      eventId: 'ev-accept',
    };
    recordAcceptance(lc, rows.get(f.id), acceptance);
    const accepted = {
      status: 'accepted',
      accepted_by: 'auditor@example.com',
      accepted_note: 'fee agreed by phone',
      accepted_at: '2025-03-03T09:00:00.000Z',
      accepted_by_event: 'ev-accept',
      values: f.values,
      evidence: f.evidence,
      amount_in_doubt: 20n,
      resolved_at: null,
    };
    // other values that put as much in doubt change nothing
    applyFindings(
      lc,
      rows,
      [finding({ values: { register: { merchant_fee: '200' }, period: { merchant_fee: '220' } } })],
      at(3, 'ev-3'),
    );
    expect(rows.get(f.id)).toMatchObject({
      ...accepted,
      amount_in_doubt_now: 20n,
      updated_at: '2025-03-03T09:00:00.000Z',
      updated_by_event: 'ev-accept',
    });
    // more in doubt: the row stays as accepted, and shows what is in doubt now (the statements hold the rest)
    applyFindings(
      lc,
      rows,
      [finding({ values: { register: { merchant_fee: '100' }, period: { merchant_fee: '150' } } })],
      at(4, 'ev-4'),
    );
    expect(rows.get(f.id)).toMatchObject({ ...accepted, amount_in_doubt_now: 50n, updated_by_event: 'ev-4' });
    // no longer found: nothing is in doubt now, and it stays accepted
    applyFindings(lc, rows, [], at(5, 'ev-5'));
    expect(rows.get(f.id)).toMatchObject({ ...accepted, amount_in_doubt_now: null, updated_by_event: 'ev-5' });
    // a second acceptance of an accepted row changes nothing
    lc.changed.clear();
    recordAcceptance(lc, rows.get(f.id), { ...acceptance, note: 'again', eventId: 'ev-accept-2' });
    expect(lc.changed.size).toBe(0);
    expect(rows.get(f.id)!.accepted_note).toBe('fee agreed by phone');
  });

  it('an acceptance before its discrepancy waits in a leg that keeps them, and is dropped in one that does not', () => {
    const f = finding();
    const acceptance = {
      discrepancyId: f.id,
      acceptedBy: 'auditor@example.com',
      note: 'known',
      acceptedAt: '2025-03-01T00:00:00.000Z',
      eventId: 'ev-accept',
    };
    const keeps = newLifecycle(new Map());
    recordAcceptance(keeps, undefined, acceptance);
    const rows = new Map<string, DiscrepancyRow>();
    applyFindings(keeps, rows, [f], at(1, 'ev-1'));
    expect(rows.get(f.id)).toMatchObject({
      status: 'accepted',
      detected_at: '2025-03-02T01:00:00.000Z',
      detected_by_event: 'ev-1',
      accepted_by_event: 'ev-accept',
      // found and accepted in the same change: stamped by the run that found it
      updated_by_event: 'ev-1',
    });
    expect(keeps.waiting!.size).toBe(0);

    const none = newLifecycle(null);
    recordAcceptance(none, undefined, acceptance);
    const plain = new Map<string, DiscrepancyRow>();
    applyFindings(none, plain, [f], at(1, 'ev-1'));
    expect(plain.get(f.id)!.status).toBe('open');
  });

  it('a leg judged whole gives the rows the same steps give, from the times its findings carry', () => {
    const f = finding();
    const detected = at(1, 'ev-found');
    const resolved = at(7, 'ev-paid');
    const [open, closed, accepted] = wholeRows(
      [
        { ...f, detected, resolved: null },
        { ...f, id: 'closed', detected, resolved },
        { ...f, id: 'accepted', detected, resolved },
      ],
      new Map([
        [
          'accepted',
          [{ kind: 'accepted', acceptedBy: 'a', note: 'n', acceptedAt: '2025-03-04T00:00:00.000Z', eventId: 'ev-acc' }],
        ],
      ]),
    );
    const stepwise = runs([
      [[f], detected],
      [[], resolved],
    ]).rows.get(f.id)!;
    expect(open).toMatchObject({ status: 'open', detected_at: detected.now, updated_by_event: 'ev-found' });
    expect({ ...closed, id: f.id }).toEqual(stepwise);
    expect(accepted).toMatchObject({
      status: 'accepted',
      resolved_at: resolved.now,
      resolved_by_event: 'ev-paid',
      updated_at: '2025-03-04T00:00:00.000Z',
      updated_by_event: 'ev-acc',
    });
  });
});

describe('the discrepancy core: the id', () => {
  it('is the text each leg first stored its ids with, so no stored id (nor an acceptance naming one) changes', () => {
    expect(discrepancyId('amount_mismatch', 'k\nreceiver')).toBe(uuidV5('discrepancy\namount_mismatch\nk\nreceiver'));
    expect(discrepancyId('fee_above_contract', 'op|r')).toBe(uuidV5('order-discrepancy\nfee_above_contract\nop|r'));
    expect(discrepancyId('settlement_late', 'UAH|2025-03-03')).toBe(uuidV5('settlement_late|UAH|2025-03-03'));
    expect(discrepancyId('payout_missing', 'REF-1')).toBe(
      eventIdFor('payout-discrepancy', { type: 'payout_missing', key: 'REF-1' }),
    );
  });

  it('differs by type and key, for every type of the registry', () => {
    const ids = DISCREPANCY_TYPES.flatMap((t) => [discrepancyId(t, 'a'), discrepancyId(t, 'b')]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const t of DISCREPANCY_TYPES)
      expect(discrepancyId(t, 'a'), `${entryOf(t).leg} ${t}`).toMatch(/^[0-9a-f-]{36}$/);
  });
});
