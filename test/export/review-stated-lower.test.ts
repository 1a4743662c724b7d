import { describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { correctionsAt, monthRuns } from '../../src/export/statements/corrections';
import { issuedPayouts, statementPayouts } from '../../src/export/statements/payouts';
import type { StatementFigures } from '../../src/export/statements/workbooks';
import { formatPosition, type Position } from '../../src/store/types';
import { useTestStore } from '../support/db';

/**
 * A hostile review of what a statement run records of "A month stated lower" (docs/bank.md): issued again at
 * the cut of a run already recorded, a run records what that run recorded (the same event, nothing new), also
 * for a correction recorded before `stillAsked` was kept; a correction's figure is its amount due, never below
 * 0, and only where earlier runs asked the sub-merchant for money.
 */

const TZ = 'Europe/Kyiv';

type Row = { reference: string | null; payable: string; amountDue: string; stillAsked?: string };

const fx = useTestStore();

/** A run of `month` for SM-A in EUR cut at `cut`; returns where its event is. */
async function run(month: string, cut: string, r: Row, subMerchantId: string | null = null): Promise<Position> {
  const e = newEvent(StatementIssued, {
    month,
    timezone: TZ,
    subMerchantId,
    position: cut,
    figuresSha256: 'a'.repeat(64),
    statements: 1,
    files: [],
    payouts: [{ subMerchantId: 'SM-A', currency: 'EUR', held: '0', holds: [], ...r }],
  });
  await fx.store.append(statementStream(month), [e]);
  return (await fx.store.readStream(statementStream(month))).find((x) => x.id === e.id)!.position;
}

const figures = (netPayable: bigint): StatementFigures[] => [
  {
    subMerchantId: 'SM-A',
    subMerchantName: 'Shop A',
    currency: 'EUR',
    opening: 0n,
    gross: netPayable,
    refunds: 0n,
    chargebacks: 0n,
    fees: 0n,
    reserveHeld: 0n,
    reserveReleased: 0n,
    netPayable,
    closing: netPayable,
    operations: 1,
  } as StatementFigures,
];

/** What a run of `month` cut at `cut` records for the month stated at `netPayable`. */
async function recordedAt(month: string, cut: Position, netPayable: bigint) {
  const payouts = await statementPayouts(
    { store: fx.store, namesOf: async () => ['Shop A'], recordedHeld: async () => [] },
    { month, timezone: TZ, cut, figures: figures(netPayable), runs: [], held: [], paid: [] },
  );
  return issuedPayouts(payouts);
}

const recordedData = async (month: string) =>
  (await fx.store.readStream(statementStream(month))).map((e) => (e.data as { payouts: unknown[] }).payouts);

describe('statement runs review: a run issued again at its cut records what it recorded', () => {
  it('a correction recorded before stillAsked was kept, issued again at its cut: the same payouts (no second event)', async () => {
    const month = '2026-07';
    const first = await run(month, '1/0', { reference: 'RS-SM-A-2026-07-EUR', payable: '100000', amountDue: '100000' });
    // the correction, cut after the first run's event, recorded (as before the figure was kept) without it
    await run(month, formatPosition(first), { reference: null, payable: '0', amountDue: '80000' });
    const [, legacy] = await recordedData(month);
    expect(await recordedAt(month, first, 800_00n)).toEqual(legacy);
  });

  it('a correction recorded with the figure, issued again at its cut: the same figure', async () => {
    const month = '2026-08';
    const first = await run(month, '1/0', { reference: 'RS-SM-A-2026-08-EUR', payable: '100000', amountDue: '100000' });
    await run(month, formatPosition(first), {
      reference: null,
      payable: '0',
      amountDue: '80000',
      stillAsked: '80000',
    });
    const [, recorded] = await recordedData(month);
    expect(await recordedAt(month, first, 800_00n)).toEqual(recorded);
  });

  it('a correction that states the month below nothing records 0; the month’s first run records no figure', async () => {
    const month = '2026-09';
    expect((await recordedAt(month, { commit: 1n, prepare: 0n }, 1000_00n))[0]).not.toHaveProperty('stillAsked');
    const first = await run(month, '1/0', { reference: 'RS-SM-A-2026-09-EUR', payable: '100000', amountDue: '100000' });
    expect(await recordedAt(month, first, -50_00n)).toEqual([
      expect.objectContaining({ reference: null, payable: '0', amountDue: '-5000', stillAsked: '0' }),
    ]);
    expect(await recordedAt(month, first, 1200_00n)).toEqual([
      expect.objectContaining({ reference: 'RS-SM-A-2026-09-EUR-2', payable: '20000', stillAsked: '120000' }),
    ]);
  });
});

describe('statement runs review: what a correction says was already asked', () => {
  it('after a correction that stated the month lower: what the month’s statements still ask, not every ask summed', async () => {
    const month = '2026-10';
    const first = await run(month, '1/0', { reference: 'RS-SM-A-2026-10-EUR', payable: '100000', amountDue: '100000' });
    const second = await run(month, formatPosition(first), {
      reference: 'RS-SM-A-2026-10-EUR-2',
      payable: '30000',
      amountDue: '130000',
      stillAsked: '130000',
    });
    // a late refund: the month is 800.00 in all; the statement asks nothing and says so
    const lower = await run(month, formatPosition(second), {
      reference: null,
      payable: '0',
      amountDue: '80000',
      stillAsked: '80000',
    });
    // the next correction (900.00 in all) corrects that statement, which asked 800.00 in all: 100.00 more is due
    const c = await correctionsAt(fx.store, await monthRuns(fx.store, month, TZ), lower);
    expect(c.askedBefore('SM-A', 'EUR')).toBe(800_00n);
    // before the lowering, every ask counts
    const before = await correctionsAt(fx.store, await monthRuns(fx.store, month, TZ), second);
    expect(before.askedBefore('SM-A', 'EUR')).toBe(1300_00n);
  });
});

describe('statement runs review: the month for all, then for one sub-merchant at the same cut', () => {
  it('a correction after them asks what the month owes beyond the one reference both asked (counted once)', async () => {
    const month = '2026-11';
    const asked = { reference: 'RS-SM-A-2026-11-EUR', payable: '100000', amountDue: '100000' };
    await run(month, '1/0', asked);
    const one = await run(month, '1/0', asked, 'SM-A');
    // a late sale: the month is 1,200.00 in all, 1,000.00 was asked (twice, under one reference)
    expect(await recordedAt(month, one, 1200_00n)).toEqual([
      expect.objectContaining({ reference: 'RS-SM-A-2026-11-EUR-2', payable: '20000', stillAsked: '120000' }),
    ]);
    const c = await correctionsAt(fx.store, await monthRuns(fx.store, month, TZ), one);
    expect(c.askedBefore('SM-A', 'EUR')).toBe(1000_00n);
  });
});

describe('statement runs review: a month issued for information records no figure', () => {
  it('issued again after the next month was: it asks nothing and lowers nothing (the next month carries it)', async () => {
    const month = '2026-12';
    const first = await run(month, '1/0', { reference: 'RS-SM-A-2026-12-EUR', payable: '100000', amountDue: '100000' });
    const next = await run('2027-01', formatPosition(first), {
      reference: 'RS-SM-A-2027-01-EUR',
      payable: '5000',
      amountDue: '5000',
    });
    expect(await recordedAt(month, next, 800_00n)).toEqual([
      expect.objectContaining({ reference: null, payable: '0', amountDue: '80000' }),
    ]);
    expect((await recordedAt(month, next, 800_00n))[0]).not.toHaveProperty('stillAsked');
  });
});
