import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as payoutsProjection } from '../../projections/payouts';
import { projection as settlementProjection } from '../../projections/settlement';
import type { Tx } from '../../src/projector/projection';
import type { DiscrepancyRow } from '../../src/reconciliation/discrepancies/columns';
import { discrepancyId } from '../../src/reconciliation/discrepancies/id';
import {
  applyFindings,
  type Finding,
  newLifecycle,
  recordAcceptance,
  type Stamp,
} from '../../src/reconciliation/discrepancies/lifecycle';
import type { Leg } from '../../src/reconciliation/discrepancies/registry';
import { type Leading, readDiscrepancies, writeDiscrepancies } from '../../src/reconciliation/discrepancies/table';
import { createOrderTables } from '../../src/reconciliation/orders/tables';
import { type SettlementDiscrepancy, syncDiscrepancies } from '../../src/reconciliation/settlement/discrepancies';
import { createTables } from '../../src/reconciliation/tables';
import type { RecordedEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Every leg goes through the discrepancy core (src/reconciliation/discrepancies/): the same sequence of
 * findings gives the same rows in every leg's table as the core's lifecycle gives in memory (the leg's own
 * setup makes its table; the core reads, judges and writes), and the settlement leg's own entry point gives
 * them too. And no leg keeps a lifecycle or a writer of its own: only the core writes a discrepancies table.
 */

const ROOT = path.resolve(__dirname, '../..');
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

/** The leg files that judge and write, and what each must take from the core. */
const LEG_FILES: Readonly<Record<Leg, { judges: string[]; writes: string[] }>> = {
  psp: {
    judges: ['src/reconciliation/judge.ts', 'src/reconciliation/reconciliation-events.ts'],
    writes: ['src/reconciliation/write-batch.ts'],
  },
  orders: { judges: ['src/reconciliation/orders/judging.ts'], writes: ['src/reconciliation/orders/tables.ts'] },
  settlement: {
    judges: ['src/reconciliation/settlement/discrepancies.ts'],
    writes: ['src/reconciliation/settlement/discrepancies.ts'],
  },
  payouts: { judges: ['projections/payouts.ts'], writes: ['projections/payouts.ts'] },
};

/** The files of the legs and their read models (the core left out). */
function legSources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir)).flatMap((n) => {
      const rel = `${dir}/${n}`;
      return statSync(path.join(ROOT, rel)).isDirectory() ? walk(rel) : rel.endsWith('.ts') ? [rel] : [];
    });
  return [...walk('src/reconciliation'), ...walk('projections')].filter(
    (f) => !f.startsWith('src/reconciliation/discrepancies/'),
  );
}

describe('every leg goes through the core', () => {
  it('each leg judges with the core lifecycle and writes with the core writer', () => {
    for (const [leg, { judges, writes }] of Object.entries(LEG_FILES)) {
      const judging = judges.map(read).join('\n');
      expect(judging, leg).toMatch(/from '[./]*(src\/reconciliation\/)?discrepancies\/lifecycle'/);
      expect(judging, leg).toMatch(/\b(applyFindings|wholeRows)\(/);
      expect(writes.map(read).join('\n'), leg).toMatch(/\bwriteDiscrepancies\(/);
    }
  });

  it('no file outside the core writes a discrepancies table, stamps a status or makes an id of its own', () => {
    const offenders: string[] = [];
    for (const f of legSources()) {
      const text = read(f);
      if (/(insert into|update|delete from)[^;`]*\.discrepancies\b/i.test(text)) offenders.push(`${f}: SQL write`);
      // (a reader's mapping of a row it read, isoOrNull, is not a stamp)
      if (/\b(resolved_at|detected_at): (?!isoOrNull|isoOf)/.test(text)) offenders.push(`${f}: a time`);
      if (/uuidV5\(|eventIdFor\(['"]payout-discrepancy/.test(text)) offenders.push(`${f}: an id`);
    }
    expect(offenders).toEqual([]);
  });
});

const base: Omit<Finding, 'id' | 'type'> = {
  posId: null,
  paymentId: null,
  orderId: null,
  method: null,
  operationKey: 'settlement:UAH:2025-03-03',
  receiverName: null,
  subMerchantIds: [],
  currency: 'UAH',
  occurredAt: '2025-03-02T22:00:00.000Z',
  values: { expected: '1000' },
  evidence: [],
};
const a: SettlementDiscrepancy = {
  ...base,
  id: discrepancyId('settlement_missing', 'UAH|2025-03-03'),
  type: 'settlement_missing',
};
const b: SettlementDiscrepancy = {
  ...base,
  id: discrepancyId('settlement_late', 'UAH|2025-03-04'),
  type: 'settlement_late',
  operationKey: 'settlement:UAH:2025-03-04',
  values: { received: '900' },
  evidence: ['11111111-1111-4111-8111-111111111111'],
};
const aMore: SettlementDiscrepancy = { ...a, values: { expected: '1200' } };
const ev = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const stampAt = (n: number): Stamp => ({ now: `2025-03-0${n}T12:00:00.000Z`, eventId: ev(n) });
const acceptance = {
  discrepancyId: a.id,
  acceptedBy: 'auditor@example.com',
  note: 'paid in cash',
  acceptedAt: '2025-03-05T08:00:00.000Z',
  eventId: ev(9),
};

/** The sequence: both open; one updated and the other resolved; the first accepted; the second back, the first gone. */
const SEQUENCE: ReadonlyArray<{ findings: SettlementDiscrepancy[]; at: number; accept?: boolean }> = [
  { findings: [a, b], at: 1 },
  { findings: [aMore], at: 2 },
  { findings: [aMore], at: 3, accept: true },
  { findings: [b], at: 4 },
];

/** The sequence run by the core in memory. */
function inMemory(): DiscrepancyRow[] {
  const rows = new Map<string, DiscrepancyRow>();
  const lc = newLifecycle();
  for (const step of SEQUENCE) {
    applyFindings(lc, rows, step.findings, stampAt(step.at));
    if (step.accept) recordAcceptance(lc, rows.get(a.id), acceptance);
  }
  return [...rows.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
}

const sortById = (rows: DiscrepancyRow[]) => rows.sort((x, y) => (x.id < y.id ? -1 : 1));

/** Each leg's own setup of its tables. */
const SETUPS: Readonly<Record<Leg, { setup: (tx: Tx, schema: string) => Promise<void>; leading?: Leading }>> = {
  psp: { setup: (tx, schema) => createTables(tx, schema) },
  orders: {
    setup: (tx, schema) => createOrderTables(tx, schema),
    leading: { names: ['order_key'], cells: () => ['order-1'] },
  },
  settlement: { setup: (tx, schema) => settlementProjection.setup(tx, ctxOf(schema)) },
  payouts: { setup: (tx, schema) => payoutsProjection.setup(tx, ctxOf(schema)) },
};
const ctxOf = (schema: string) => ({ schema, timezone: 'Europe/Kyiv', graceHours: 24 });

describe('the same findings give the same rows in every leg', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => db?.drop());

  for (const leg of Object.keys(SETUPS) as Leg[]) {
    it(`${leg}: through the core, into the leg's own table`, async () => {
      const schema = `leg_${leg}`;
      const { setup, leading } = SETUPS[leg];
      await db.sql.begin(async (tx) => {
        await tx`create schema ${tx(schema)}`;
        await setup(tx as unknown as Tx, schema);
      });
      for (const step of SEQUENCE) {
        await db.sql.begin(async (t) => {
          const tx = t as unknown as Tx;
          const rows = new Map((await readDiscrepancies(tx, schema, 'id', [a.id, b.id])).map((r) => [r.id, r]));
          const lc = newLifecycle();
          applyFindings(lc, rows, step.findings, stampAt(step.at));
          if (step.accept) recordAcceptance(lc, rows.get(a.id), acceptance);
          await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()], leading);
        });
      }
      const stored = await db.sql.begin((t) => readDiscrepancies(t as unknown as Tx, schema, 'id', [a.id, b.id]));
      expect(sortById(stored)).toEqual(inMemory());
      expect(inMemory().map((r) => r.status)).toEqual(
        [a, b].sort((x, y) => (x.id < y.id ? -1 : 1)).map((f) => (f === a ? 'accepted' : 'open')),
      );
    });
  }

  it("settlement: the leg's own entry point gives the same rows, stamped by its appends", async () => {
    const schema = 'leg_settlement_own';
    await db.sql.begin(async (t) => {
      await t`create schema ${t(schema)}`;
      await settlementProjection.setup(t as unknown as Tx, ctxOf(schema));
    });
    for (const step of SEQUENCE) {
      const by = { id: ev(step.at), recordedAt: new Date(stampAt(step.at).now!) } as RecordedEvent;
      await db.sql.begin((t) => syncDiscrepancies(t as unknown as Tx, schema, 'UAH', step.findings, by));
      if (step.accept)
        await db.sql.begin(async (t) => {
          const tx = t as unknown as Tx;
          const [row] = await readDiscrepancies(tx, schema, 'id', [a.id]);
          const lc = newLifecycle();
          recordAcceptance(lc, row, acceptance);
          await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()]);
        });
    }
    const stored = await db.sql.begin((t) => readDiscrepancies(t as unknown as Tx, schema, 'currency', ['UAH']));
    expect(sortById(stored)).toEqual(inMemory());
  });
});
