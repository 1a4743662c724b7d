import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { importFeeContract, parseFeeContract } from '../../src/ingest/fee-contract';
import { applicableLine, expectedFee, percentRatio } from '../../src/order-terms';

const line = (percent: string, fixed: string, rounding: 'half_up' | 'down' = 'half_up') => ({
  percent,
  fixed,
  rounding,
});

describe('the fee a contract line allows', () => {
  it('rounds half up per operation by default, or down when the line says so', () => {
    expect(expectedFee(line('1.5', '0'), 6100n)).toBe(92n); // 91.5
    expect(expectedFee(line('1.5', '0', 'down'), 6100n)).toBe(91n);
    expect(expectedFee(line('1.5', '0'), 6099n)).toBe(91n); // 91.485
    expect(expectedFee(line('2.9', '30'), 10000n)).toBe(320n);
    expect(expectedFee(line('0.035', '0'), 1_000_000n)).toBe(350n);
  });

  it('never exceeds the part', () => {
    expect(expectedFee(line('3.5', '100'), 100n)).toBe(100n);
    expect(expectedFee(line('100', '1'), 5000n)).toBe(5000n);
  });

  it('is exact for any part and percentage (integer ratio, no float)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 13n }), fc.integer({ min: 0, max: 100_000 }), (part, milli) => {
        const percent = `${Math.floor(milli / 1000)}.${String(milli % 1000).padStart(3, '0')}`;
        const { num, den } = percentRatio(percent);
        const exact = part * num; // fee × den, exactly
        const fee = expectedFee(line(percent, '0'), part);
        const capped = fee === part;
        // half-up: |fee·den − exact| ≤ den/2, and a half rounds up
        return capped || (fee * den - exact <= den / 2n && exact - fee * den < den / 2n + (den % 2n));
      }),
    );
  });
});

describe('the contract file', () => {
  const CSV = `sub_merchant_id,method,currency,percent,fixed,effective_from,rounding
*,purchase,EUR,2.9,0.30,2025-01-01,
sm-a,purchase,EUR,1.5,0,2025-01-01,down
sm-a,purchase,EUR,1.2,0,2025-03-01,half_up
`;
  it('reads the lines, the default schedule and the versions by day', () => {
    const r = parseFeeContract(CSV, 'contract.csv');
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.lines[0]).toMatchObject({ subMerchantId: '*', fixed: '30', rounding: 'half_up', line: 2 });
    expect(applicableLine(r.lines, 'sm-a', 'purchase', 'EUR', '2025-02-10')?.percent).toBe('1.5');
    expect(applicableLine(r.lines, 'sm-a', 'purchase', 'EUR', '2025-03-01')?.percent).toBe('1.2');
    expect(applicableLine(r.lines, 'sm-b', 'purchase', 'EUR', '2025-03-01')?.subMerchantId).toBe('*');
    expect(applicableLine(r.lines, 'sm-a', 'purchase', 'EUR', '2024-12-31')).toBeNull();
    expect(applicableLine(r.lines, 'sm-a', 'refund', 'EUR', '2025-03-01')).toBeNull();
  });

  it('names the line and the column of every problem', () => {
    const r = parseFeeContract(
      `sub_merchant_id,method,currency,percent,fixed,effective_from\nsm a,buy,eur,2.9%,x,2025-13-01\n*,purchase,EUR,1,0,2025-01-01\n*,purchase,EUR,2,0,2025-01-01\n`,
      'c.csv',
    );
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.issues.map((i) => `${i.line} ${i.column}`)).toEqual([
        '2 sub_merchant_id',
        '2 method',
        '2 currency',
        '2 percent',
        '2 fixed',
        '2 effective_from',
        '4 null',
      ]);
  });
});

describe('recon fees import', () => {
  let db: TestDatabase;
  let store: EventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('keeps every version: a re-import changes nothing, a changed line is a new event', async () => {
    const v1 = parseFeeContract(
      'sub_merchant_id,method,currency,percent,fixed,effective_from\nsm-a,purchase,EUR,1.5,0,2025-01-01\n',
      'c.csv',
    );
    const v2 = parseFeeContract(
      'sub_merchant_id,method,currency,percent,fixed,effective_from\nsm-a,purchase,EUR,1.4,0,2025-01-01\n',
      'c.csv',
    );
    if (!v1.ok || !v2.ok) throw new Error('valid contract refused');
    expect(await importFeeContract(store, v1.lines, { file: 'c.csv' })).toEqual({ set: 1, unchanged: 0 });
    expect(await importFeeContract(store, v1.lines, { file: 'c.csv' })).toEqual({ set: 0, unchanged: 1 });
    expect(await importFeeContract(store, v2.lines, { file: 'c.csv' })).toEqual({ set: 1, unchanged: 0 });
    expect(await importFeeContract(store, v1.lines, { file: 'c.csv' })).toEqual({ set: 1, unchanged: 0 });
    expect((await store.readStream('fee-contract-sm-a')).map((e) => (e.data as { percent: string }).percent)).toEqual([
      '1.5',
      '1.4',
      '1.5',
    ]);
  });
});
