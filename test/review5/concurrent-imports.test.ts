import { describe, expect, it } from 'vitest';
import { importFeeContract, parseFeeContract } from '../../src/ingest/fee-contract';
import { useTestStore } from '../support/db';

/**
 * Review 5: the same fee contract imported by two processes at once (two `recon fees import`, or the worker's
 * RECON_FEE_CONTRACT load beside a command). One writes it; the other must write nothing more and fail, if at
 * all, with a refusal that says so, never an internal error; the store holds each line once.
 */

const t = useTestStore();

describe('review5: two imports of one fee contract at once', () => {
  it('each line is stored once; the loser is told, not crashed', async () => {
    const parsed = parseFeeContract(
      'sub_merchant_id,method,currency,percent,fixed,effective_from\n*,purchase,EUR,2.9,0.30,2025-01-01\nsm-1,purchase,EUR,1.5,0,2025-01-01\n',
      'fees.csv',
    );
    if (!parsed.ok) throw new Error('fixture');
    const results = await Promise.allSettled([
      importFeeContract(t.store, parsed.lines, { file: 'fees.csv' }),
      importFeeContract(t.store, parsed.lines, { file: 'fees-copy.csv' }),
    ]);
    const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
    expect(row!.n).toBe(2);
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).not.toMatch(/internal/i);
  });
});
