import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { explain } from '../../src/reconciliation/explain';
import { explanationText } from '../../src/reconciliation/explain-text';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { POS, appendAll, at, registerRows, subMerchant } from './fixtures';

/**
 * `recon explain` as text: each receiver under its own operation (all once printed under the last one),
 * amounts in major units with the currency, a refund negative as on statements, journal entries as lines.
 */

let db: TestDatabase;
let store: EventStore;
let text: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const receivers = (a: bigint, b: bigint) => [
    { name: 'Alpha Shop', amount: a, fee: 1_00n },
    { name: 'Beta Shop', amount: b, fee: 0n },
  ];
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    subMerchant('sm-beta', 'Beta Shop'),
    registerRows({
      paymentId: 'pay-x',
      orderId: 'ORDER-X',
      dateTime: at('2024-05-10T08:00:00Z'),
      amount: 100_00n,
      receivers: receivers(59_00n, 40_00n),
      reportId: 'r1',
      observedAt: at('2024-05-10T20:00:00Z'),
    }),
    registerRows({
      paymentId: 'pay-x',
      orderId: 'ORDER-X',
      method: 'refund',
      dateTime: at('2024-05-11T08:00:00Z'),
      amount: 30_00n,
      receivers: [{ name: 'Beta Shop', amount: 30_00n, fee: 0n }],
      reportId: 'r2',
      observedAt: at('2024-05-11T20:00:00Z'),
    }),
  ]);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(
      {
        sql: db.sql,
        store,
        log: silentLogger,
        timezone: 'UTC',
        graceHours: 48,
        projections: [reconciliation, journal],
      },
      {},
    );
    if (r.projections.every((p) => p.position === r.head)) break;
  }
  text = explanationText(await explain({ sql: db.sql, store, posIds: [POS] }, 'ORDER-X'));
});

afterAll(async () => {
  await db?.drop();
});

describe('recon explain (text)', () => {
  it('prints each receiver under its own operation', () => {
    const lines = text.split('\n');
    const purchase = lines.findIndex((l) => l.startsWith('  purchase #'));
    const refund = lines.findIndex((l) => l.startsWith('  refund #'));
    expect(purchase).toBeGreaterThan(0);
    expect(refund).toBeGreaterThan(purchase);
    const under = (from: number, to: number) => lines.slice(from + 1, to).filter((l) => l.includes('receiver '));
    expect(under(purchase, refund)).toEqual([
      '    receiver Alpha Shop (sm-alpha): share 60.00 UAH, fee 1.00 UAH, reserve 0.00 UAH',
      '    receiver Beta Shop (sm-beta): share 40.00 UAH, fee 0.00 UAH, reserve 0.00 UAH',
    ]);
    const end = lines.indexOf('discrepancies:');
    expect(under(refund, end)).toEqual([
      '    receiver Beta Shop (sm-beta): share -30.00 UAH, fee 0.00 UAH, reserve 0.00 UAH',
    ]);
  });

  it('shows amounts in major units with the currency, a refund negative', () => {
    expect(text).toMatch(/ {4}register success 100\.00 UAH; period absent; webhook absent/);
    expect(text).toMatch(/ {4}register success -30\.00 UAH; period absent; webhook absent/);
  });

  it("shows the events' amounts in major units too, never minor units beside a currency", () => {
    const events = text.slice(text.indexOf('events (commit order):'), text.indexOf('operations'));
    expect(events).toMatch(
      /RegisterRecordObserved +purchase success amount=100\.00 UAH receiver=Alpha Shop share=60\.00 UAH/,
    );
    expect(events).toMatch(/refund success amount=30\.00 UAH receiver=Beta Shop share=30\.00 UAH/);
    expect(events).not.toMatch(/amount=\d+ UAH|share=\d+ /);
  });

  it('shows the journal entries as readable lines', () => {
    const journalPart = text.slice(text.indexOf('journal entries:'));
    expect(journalPart).toMatch(/settlement {2}purchase success {2}Alpha Shop: share 60\.00 UAH, fee 1\.00 UAH/);
    expect(journalPart).toMatch(/settlement {2}refund success {2}Beta Shop: share 30\.00 UAH/);
    expect(journalPart).not.toContain('{"');
  });
});
