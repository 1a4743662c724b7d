import { describe, expect, it } from 'vitest';
import { parseAmount } from '../../src/money';
import type { GroundTruthEntry, Operation } from '../../src/sandbox/model';
import { periodRecord, REGISTER_FIELDS, registerRows, webhookBody } from '../../src/sandbox/render';
import { DISCREPANCY_TYPES } from '../../src/reconciliation/discrepancy-types';
import { generateScenario, GROUND_TRUTH_TYPES, type Scenario } from '../../src/sandbox/scenario';

const render = { fields: REGISTER_FIELDS, projectName: 'p', entityName: 'e' };

/** Exact minor units of a wire amount (JSON number or decimal string). */
function minor(v: unknown): bigint {
  const r = parseAmount(v, { allowNegative: true });
  if (!r.ok) throw new Error(`not an amount: ${String(v)}`);
  return r.minor;
}

function everything(s: Scenario): string {
  const orders = [...s.orders()];
  return JSON.stringify(
    { orders, truth: s.groundTruth, csv: s.subMerchantCsv(), creds: s.credentials, days: s.countMismatchDays },
    (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
  );
}

/**
 * An independent reading of the three rendered sources, written only from the interface and the
 * economic model of docs/architecture.md: what any correct reconciler must find. It never looks at
 * the scenario's injection plan.
 */
function detect(s: Scenario): GroundTruthEntry[] {
  const directory = new Set(
    s
      .subMerchantCsv()
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const m = /^[^,]+,("(?:[^"]|"")*"|[^,]*),/.exec(line)!;
        return m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!;
      }),
  );
  const found: GroundTruthEntry[] = [];
  for (const order of s.orders()) {
    for (const op of order.operations) {
      const base = {
        posId: op.posId,
        orderId: op.orderId,
        paymentId: op.paymentId,
        transactionId: op.transactionId,
        method: op.method,
      };
      const rows = registerRows(op, render).map((t) => JSON.parse(t) as Record<string, unknown>);
      const periodText = periodRecord(op);
      const period = periodText === null ? null : (JSON.parse(periodText) as Record<string, unknown>);
      const hook = JSON.parse(webhookBody(op)) as Record<string, unknown> & { fee: { amount: number } };
      const final = op.status === 'success' || op.status === 'failure';
      if (final && rows.length === 0) found.push({ ...base, type: 'missing_in_report', detail: {} });
      if (final && period === null) found.push({ ...base, type: 'missing_in_period', detail: {} });
      if (final && (op.webhook === 'lost_for_good' || op.webhook === 'lost_resendable'))
        found.push({ ...base, type: 'missing_webhook', detail: { lostForGood: op.webhook === 'lost_for_good' } });
      const reg = rows[0];
      const sources = [period, op.webhook === 'sent' || op.webhook === 'lost_resendable' ? hook : null].filter(
        (x): x is Record<string, unknown> => x !== null,
      );
      if (reg) {
        if (sources.some((x) => x.status !== reg.status)) found.push({ ...base, type: 'status_mismatch', detail: {} });
        if (sources.some((x) => minor(x.amount) !== minor(reg.originalAmount)))
          found.push({ ...base, type: 'amount_mismatch', detail: {} });
        if (sources.some((x) => x.currency !== reg.currency))
          found.push({ ...base, type: 'currency_mismatch', detail: {} });
        const feeDiffers =
          (period && minor(period.merchantFee) !== minor(reg.merchantFee)) ||
          (period && minor(period.customerFee) !== minor(reg.customerFee)) ||
          minor(hook.fee.amount) !== minor(reg.merchantFee);
        if (feeDiffers) found.push({ ...base, type: 'fee_mismatch', detail: {} });
        const receiverRows = rows.filter((r) => r.receiverName !== null);
        if (receiverRows.length > 0) {
          const byName = new Map<string, Record<string, unknown>[]>();
          for (const r of receiverRows)
            byName.set(r.receiverName as string, [...(byName.get(r.receiverName as string) ?? []), r]);
          const firsts = [...byName.values()].map((list) => list[0]!);
          const shares = firsts.reduce((a, r) => a + minor(r.receiverAmount) + minor(r.receiverFee), 0n);
          if (shares !== minor(reg.originalAmount))
            found.push({ ...base, type: 'split_mismatch', receiverName: '', detail: {} });
          for (const [name, list] of byName) {
            if (list.length > 1 && new Set(list.map((r) => JSON.stringify(r))).size > 1)
              found.push({ ...base, type: 'duplicate', receiverName: name, detail: {} });
            if (!directory.has(name))
              found.push({ ...base, type: 'unknown_sub_merchant', receiverName: name, detail: {} });
          }
        }
      }
    }
  }
  return found;
}

const key = (e: GroundTruthEntry) =>
  `${e.type} ${e.paymentId} ${e.method}${e.type === 'missing_webhook' ? ` ${e.detail.lostForGood}` : ''}`;

describe('generateScenario', () => {
  it('gives the same scenario for the same seed, byte for byte, and another for another seed', () => {
    const a = generateScenario({ seed: 'demo', payments: 250, timezone: 'Europe/Kyiv', month: '2024-03' });
    const b = generateScenario({ seed: 'demo', payments: 250, timezone: 'Europe/Kyiv', month: '2024-03' });
    const c = generateScenario({ seed: 'demo2', payments: 250, timezone: 'Europe/Kyiv', month: '2024-03' });
    expect(everything(a)).toBe(everything(b));
    expect(everything(a)).not.toBe(everything(c));
    // rendered wire forms too
    const wire = (s: Scenario) =>
      [...s.operations()]
        .map((op) => registerRows(op, render).join('') + periodRecord(op) + webhookBody(op))
        .join('\n');
    expect(wire(a)).toBe(wire(b));
  });

  it('covers the month in the business time zone, and orders can be regenerated one by one', () => {
    const s = generateScenario({ seed: 5, payments: 120, timezone: 'Europe/Kyiv', month: '2024-03' });
    expect(s.from.toISOString()).toBe('2024-02-29T22:00:00.000Z');
    expect(s.to.toISOString()).toBe('2024-03-31T21:00:00.000Z');
    const all = [...s.orders()];
    expect(all).toHaveLength(120);
    for (const o of all) {
      expect(JSON.stringify(s.order(o.index), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v))).toBe(
        JSON.stringify(o, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}` : v)),
      );
      expect(s.findOrder(o.orderId)?.index).toBe(o.index);
      for (const op of o.operations) expect(op.at >= s.from.getTime() && op.at < s.to.getTime()).toBe(true);
    }
    // a window query gives exactly the operations of the window
    const from = Date.parse('2024-03-10T00:00:00Z');
    const to = Date.parse('2024-03-17T00:00:00Z');
    const inWindow = [...s.operations({ from, to })].map((op) => `${op.paymentId}/${op.method}/${op.at}`);
    const filtered = [...s.operations()]
      .filter((op) => op.at >= from && op.at < to)
      .map((op) => `${op.paymentId}/${op.method}/${op.at}`);
    expect(inWindow).toEqual(filtered);
    expect(inWindow.length).toBeGreaterThan(0);
  });

  it('has the economic relations of the architecture on every clean operation', () => {
    const s = generateScenario({ seed: 11, payments: 600, injections: 'none' });
    expect(s.groundTruth).toEqual([]);
    const kinds = new Set<string>();
    const methods = new Set<string>();
    const currencies = new Set<string>();
    let customerFees = 0;
    let reserves = 0;
    let own = 0;
    for (const order of s.orders()) {
      kinds.add(order.kind);
      let settled = 0n;
      let refunded = 0n;
      for (const op of order.operations) {
        methods.add(`${op.method}:${op.status}`);
        currencies.add(op.currency);
        expect(op.originalAmount > 0n).toBe(true);
        const rows = registerRows(op, render).map((t) => JSON.parse(t) as Record<string, unknown>);
        expect(rows.length).toBe(Math.max(1, op.receivers.length));
        for (const r of rows) {
          // operation fields repeated on every row
          expect(minor(r.amount)).toBe(minor(r.originalAmount) + minor(r.customerFee));
          expect(minor(r.originalAmount)).toBe(op.originalAmount);
          expect(r.paymentId).toBe(op.paymentId);
        }
        if (op.receivers.length > 0) {
          expect(op.receivers.length).toBeLessThanOrEqual(4);
          const shares = rows.reduce((a, r) => a + minor(r.receiverAmount) + minor(r.receiverFee), 0n);
          expect(shares).toBe(op.originalAmount);
          const fees = rows.reduce((a, r) => a + minor(r.receiverFee), 0n);
          expect(fees).toBe(minor(rows[0]!.merchantFee));
          for (const r of rows) expect(minor(r.reserveAmount) <= minor(r.receiverAmount)).toBe(true);
          reserves += rows.filter((r) => minor(r.reserveAmount) > 0n).length;
        } else {
          own++;
          expect(rows[0]!.receiverName).toBeNull();
        }
        const hook = JSON.parse(webhookBody(op)) as {
          amount: number;
          fee: { amount: number };
          fixed_fee?: { amount: number };
          percent_fee?: { amount: number };
        };
        expect(minor(hook.amount)).toBe(op.originalAmount);
        expect(minor(hook.fee.amount)).toBe(minor(rows[0]!.merchantFee));
        if (hook.fixed_fee && hook.percent_fee)
          expect(minor(hook.fixed_fee.amount) + minor(hook.percent_fee.amount)).toBe(minor(hook.fee.amount));
        const period = JSON.parse(periodRecord(op)!) as Record<string, string>;
        expect(period.amount).toMatch(/^\d+\.\d{2}$/);
        expect(minor(period.amount)).toBe(op.originalAmount);
        expect(minor(period.merchantFee)).toBe(op.merchantFee);
        expect(minor(period.customerFee)).toBe(op.customerFee);
        if (op.customerFee > 0n) customerFees++;
        if (op.status === 'pending') expect(op.statusCode).toBe('2122');
        if ((op.method === 'purchase' || op.method === 'capture') && op.status === 'success')
          settled += op.originalAmount;
        if (op.method === 'refund') refunded += op.originalAmount;
      }
      expect(refunded <= settled || settled === 0n).toBe(true);
    }
    expect(kinds.size).toBe(9);
    for (const m of [
      'auth:success',
      'capture:success',
      'void:success',
      'refund:success',
      'dispute:success',
      'recurrent:success',
      'purchase:failure',
      'purchase:pending',
      'purchase:init',
    ])
      expect(methods.has(m), m).toBe(true);
    expect(currencies.has('XTS')).toBe(true);
    expect(customerFees).toBeGreaterThan(0);
    expect(reserves).toBeGreaterThan(0);
    expect(own).toBeGreaterThan(0);
  });

  it('lists as ground truth exactly the disagreements an independent reading of the sources finds', () => {
    const s = generateScenario({ seed: 'truth', payments: 400 });
    const truth = s.groundTruth.filter((e) => e.type !== 'report_count_mismatch');
    const found = detect(s);
    expect(found.map(key).sort()).toEqual(truth.map(key).sort());
    // every type is one recon names, every type is there, at most one per order
    for (const t of GROUND_TRUTH_TYPES) expect(DISCREPANCY_TYPES, t).toContain(t);
    for (const t of GROUND_TRUTH_TYPES)
      expect(
        s.groundTruth.some((e) => e.type === t),
        t,
      ).toBe(true);
    const perOrder = new Map<string, number>();
    for (const e of truth) perOrder.set(e.orderId!, (perOrder.get(e.orderId!) ?? 0) + 1);
    expect(Math.max(...perOrder.values())).toBe(1);
    expect(s.groundTruth.filter((e) => e.type === 'missing_webhook').map((e) => e.detail.lostForGood)).toEqual(
      expect.arrayContaining([true, false]),
    );
    // the unknown receiver is in no other order, and absent from the directory
    const unknown = s.groundTruth.find((e) => e.type === 'unknown_sub_merchant')!;
    expect(s.subMerchantCsv()).not.toContain(unknown.receiverName!);
    const users = [...s.orders()].filter((o) =>
      o.operations.some((op) => op.receivers.some((r) => r.name === unknown.receiverName)),
    );
    expect(users.map((o) => o.orderId)).toEqual([unknown.orderId]);
    // a count mismatch names a day of the month
    const day = s.groundTruth.find((e) => e.type === 'report_count_mismatch')!;
    expect(String(day.detail.day)).toMatch(/^2025-01-\d{2}$/);
  });

  it('follows the requested injection counts', () => {
    const s = generateScenario({
      seed: 3,
      payments: 300,
      injections: {
        amount_mismatch: 5,
        duplicate: 0,
        unknown_sub_merchant: 2,
        report_count_mismatch: 0,
        missing_webhook: 0,
        webhook_lost_resendable: 0,
      },
    });
    const count = (t: string) => s.groundTruth.filter((e) => e.type === t).length;
    expect(count('amount_mismatch')).toBe(5);
    expect(count('duplicate')).toBe(0);
    expect(count('unknown_sub_merchant')).toBe(2);
    expect(count('report_count_mismatch')).toBe(0);
    expect(count('missing_webhook')).toBe(0);
    expect(
      new Set(s.groundTruth.filter((e) => e.type === 'unknown_sub_merchant').map((e) => e.receiverName)).size,
    ).toBe(2);
    expect(s.subMerchants.filter((m) => !m.listed)).toHaveLength(2);
  });

  it('writes a directory CSV recon can read: header, quoted names, empty hold days', () => {
    const s = generateScenario({ seed: 9, payments: 50 });
    const lines = s.subMerchantCsv().trim().split('\n');
    expect(lines[0]).toBe('sub_merchant_id,name,reserve_hold_days');
    expect(lines).toHaveLength(13);
    expect(lines.some((l) => /^[0-9a-f-]{36},"[^"]*, Ltd",/.test(l))).toBe(true);
    for (const l of lines.slice(1))
      expect(l).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12},.+,(\d+)?$/);
  });

  it('is generated lazily: a large scenario answers for one order and for one day', () => {
    const s = generateScenario({ seed: 'bench', payments: 50_000 });
    const o = s.order(43_210);
    expect(o.orderId).toMatch(/-043210$/);
    expect(s.findOrder(o.orderId)?.operations[0]?.paymentId).toBe(o.operations[0]?.paymentId);
    const day = { from: Date.parse('2025-01-15T00:00:00Z'), to: Date.parse('2025-01-16T00:00:00Z') };
    const ops: Operation[] = [...s.operations(day)];
    expect(ops.length).toBeGreaterThan(1000);
    expect(ops.every((op) => op.at >= day.from && op.at < day.to)).toBe(true);
  });
});
