import { describe, expect, it } from 'vitest';
import type { BankAccount } from '../../../src/config/bank';
import { importBankFiles } from '../../../src/ingest/bank/import';
import { knownEventsOf } from '../../../src/ingest/bank/known-events';
import { silentLogger } from '../../../src/log';
import { rebuildProjection, runProjections, type RunnerDeps } from '../../../src/projector/runner';
import { projection } from '../../../projections/bank';
import { useTestStore } from '../../support/db';
import { fixture } from './support';

const accounts: BankAccount[] = [
  { id: 'SE5230000000000312345678', currency: 'SEK', role: 'settlement', name: null },
  { id: '10010010/1234567890', currency: 'EUR', role: 'payouts', name: null },
];
const t = useTestStore();
const deps = (): RunnerDeps => ({
  sql: t.db.sql,
  store: t.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 0,
  projections: [projection],
});

const rows = async () => ({
  entries: await t.db.sql`select * from recon.bank_entries order by event_id`,
  statements: await t.db.sql`select * from recon.bank_statements order by event_id`,
  unknown: await t.db.sql`select * from recon.bank_unknown_accounts order by event_id`,
});

describe('bank read model', () => {
  it('lists booked entries and statements; a rebuild from zero gives the same rows', async () => {
    await importBankFiles(
      t.store,
      knownEventsOf(t.store, t.db.sql),
      [fixture('camt053-v02-batch.xml'), fixture('mt940-dk-structured.sta'), fixture('camt053-v08-prefixed.xml')],
      { accounts },
    );
    await runProjections(deps());
    const live = await rows();
    expect(live.entries.map((r) => [r.account_id, r.direction, r.signed_amount])).toEqual(
      expect.arrayContaining([
        ['SE5230000000000312345678', 'credit', 10_000n],
        ['SE5230000000000312345678', 'debit', -5_000n],
        ['10010010/1234567890', 'debit', -970n],
      ]),
    );
    expect(live.entries).toHaveLength(6);
    expect(live.statements.map((s) => [s.statement_id, s.closing_balance])).toEqual(
      expect.arrayContaining([
        ['AAAASESS-FP-STAT001-0131', 1_025_000n],
        ['STARTUMSE/00001/001', 701_456n],
      ]),
    );
    // the camt.053.001.08 statement's account is not configured here
    expect(live.unknown.map((u) => [u.account, u.entries])).toEqual([['DE89370400440532013000', 2]]);
    // every statement's entries sum to its movement
    const [foot] = await t.db.sql<{ bad: bigint }[]>`
      select count(*) as bad from recon.bank_statements s
      where s.closing_balance - s.opening_balance <> (select coalesce(sum(signed_amount), 0) from recon.bank_entries e
        where e.account_id = s.account_id and e.statement_id = s.statement_id)`;
    expect(foot!.bad).toBe(0n);

    await rebuildProjection(deps(), 'bank');
    expect(await rows()).toEqual(live);
  });
});
