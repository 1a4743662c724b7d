import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyReportData } from '../../src/export/nightly/report';
import type { AppendRequest } from '../../src/store/types';
import { appendAll, at, periodRow, project, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { type CollatedDatabase, createCollatedDatabase } from '../support/collated-db';

/**
 * The embedded PostgreSQL is initialised without a locale (C), but a server given through DATABASE_URL usually
 * collates text by a locale (en-US here, by ICU): upper and lower case interleaved ("alpha" before "Beta", where
 * C puts "Beta" first). The nightly report ordered its rows by sub-merchant id in the server's collation, so the
 * same events gave another report on another server; its rows follow the code unit order, as the statements do.
 */

/** A payment of each sub-merchant whose period report says it failed, the register that it succeeded. */
function events(): AppendRequest[] {
  const dateTime = at('2024-03-10T10:00:00Z');
  const observedAt = at('2024-03-14T00:00:00Z');
  const shops = [
    ['alpha', 'Alpha Shop'],
    ['Beta', 'Beta Shop'],
    ['gamma_1', 'Gamma Shop'],
    ['Gamma-2', 'Gamma Two'],
  ] as const;
  return [
    ...shops.map(([id, name]) => subMerchant(id, name)),
    ...shops.flatMap(([id, name]) => [
      registerRows({
        paymentId: `pay-${id}`,
        dateTime,
        amount: 51_00n,
        receivers: [{ name, amount: 50_00n, fee: 1_00n }],
        reportId: 'rep-1',
        observedAt,
      }),
      periodRow({ paymentId: `pay-${id}`, dateTime, amount: 51_00n, status: 'failure', reportId: 'rep-1', observedAt }),
    ]),
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: observedAt,
      reportId: 'rep-1',
      announced: shops.length,
    }),
  ];
}

const made: CollatedDatabase[] = [];
afterAll(async () => {
  for (const d of made) await d.drop();
});

async function report(locale: 'C' | 'icu') {
  const d = await createCollatedDatabase(locale);
  made.push(d);
  await appendAll(d.store, events());
  await project(d.sql, d.store);
  const data = await nightlyReportData(
    { sql: d.sql, store: d.store },
    { date: '2024-03-14', timezone: 'UTC', graceHours: 48, now: new Date('2024-03-15T02:00:00Z') },
  );
  return data.discrepancies.map((r) => [r.type, r.subMerchantId, r.opened]);
}

describe('the nightly report on a server that collates by locale', () => {
  let c: unknown[][];
  beforeAll(async () => {
    c = await report('C');
  });

  it('lists discrepancies by sub-merchant in code unit order on the C server', () => {
    const shops = c.filter(([type]) => type === 'status_mismatch').map(([, id]) => id);
    expect(shops).toEqual(['Beta', 'Gamma-2', 'alpha', 'gamma_1']);
  });

  it('lists them in the same order on an en-US (ICU) server', async () => {
    expect(await report('icu')).toEqual(c);
  });
});
