import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import type { StatementDeps } from '../../src/export/statements/issue';
import { registerObserved } from '../../src/ingest/observations';
import { appendObservations } from '../../src/ingest/reobservations';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { runProjections, type RunnerDeps } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { projection as journal } from '../../projections/journal';
import { useTestStore, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';
import type { EventStore } from '../../src/store/types';

export const TZ = 'Europe/Kyiv';

export interface SaleOptions {
  /** receiverFee and merchantFee; originalAmount is amount + fee (default 0) */
  fee?: bigint;
  reserve?: bigint;
  status?: NormalizedRegisterRecord['status'];
  currency?: string;
}

/** A register record of one purchase of `pos`, paid to `receiver`. */
export function saleRecord(
  pos: string,
  paymentId: string,
  dateTime: string,
  receiver: string,
  amount: bigint,
  o: SaleOptions = {},
): NormalizedRegisterRecord {
  const fee = o.fee ?? 0n;
  return {
    projectId: pos,
    orderId: `order-${paymentId}`,
    paymentId,
    method: 'purchase',
    status: o.status ?? 'success',
    dateTime,
    currency: o.currency ?? 'EUR',
    amount: null,
    originalAmount: String(amount + fee),
    customerFee: '0',
    merchantFee: String(fee),
    receiverName: receiver,
    receiverAmount: String(amount),
    receiverFee: String(fee),
    reserveAmount: String(o.reserve ?? 0n),
    cardMask: null,
    payway: 'card',
    other: {},
  };
}

export interface StatementTest {
  readonly db: TestDatabase;
  readonly store: EventStore;
  /** the journal projection, in TZ */
  readonly project: RunnerDeps;
  readonly deps: StatementDeps;
  /** a temporary folder for the statements, removed after the file's tests */
  readonly out: string;
  sale(
    paymentId: string,
    dateTime: string,
    receiver: string,
    amount: bigint,
    o?: SaleOptions,
  ): NormalizedRegisterRecord;
  /** waits until everything appended is visible, then runs the journal projection */
  settle(): Promise<void>;
  /** appends one register observation (reportId `rep-<observedAt>`), then settles */
  observe(r: NormalizedRegisterRecord, observedAt: string): Promise<void>;
  /** one nightly sync: the records of a register report, through the re-observation path, then settles */
  sync(records: NormalizedRegisterRecord[], observedAt: string): Promise<void>;
  /** imports a sub-merchant directory CSV, then settles unless `settle: false` */
  directory(csvText: string, o?: { settle?: boolean }): Promise<void>;
}

/**
 * A database and store of the file's own (useTestStore), the journal projection and StatementDeps in TZ,
 * and the register observations of `pos` over `window` that the statement tests feed it.
 */
export function useStatementTest(opts: {
  pos: string;
  outPrefix: string;
  window?: { from: string; to: string };
}): StatementTest {
  const { pos } = opts;
  const window = opts.window ?? { from: '2025-01-01', to: '2025-03-01' };
  const fx = useTestStore();
  const out = mkdtempSync(path.join(tmpdir(), opts.outPrefix));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const project = (): RunnerDeps => ({
    sql: fx.db.sql,
    store: fx.store,
    log: silentLogger,
    timezone: TZ,
    graceHours: 48,
    projections: [journal],
  });
  const observation = (r: NormalizedRegisterRecord, observedAt: string) => {
    const k = registerObserved(pos, JSON.stringify(r), r, {
      source: 'register',
      reportId: `rep-${observedAt}`,
      window,
      observedAt,
    });
    return { stream: k.stream, events: [k.event] };
  };
  const settle = async () => {
    await waitVisible(fx.db.sql, fx.store);
    await runProjections(project());
  };
  return {
    get db() {
      return fx.db;
    },
    get store() {
      return fx.store;
    },
    get project() {
      return project();
    },
    get deps(): StatementDeps {
      return { sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ };
    },
    out,
    sale: (paymentId, dateTime, receiver, amount, o) => saleRecord(pos, paymentId, dateTime, receiver, amount, o),
    settle,
    async observe(r, observedAt) {
      const req = observation(r, observedAt);
      await fx.store.append(req.stream, req.events);
      await settle();
    },
    async sync(records, observedAt) {
      await appendObservations(
        fx.store,
        records.map((r) => observation(r, observedAt)),
      );
      await settle();
    },
    async directory(csvText, o = {}) {
      const csv = parseSubMerchantCsv(csvText, 'directory.csv');
      if (!csv.ok) throw new Error(JSON.stringify(csv.issues));
      await importSubMerchants(fx.store, csv.rows);
      if (o.settle !== false) await settle();
    },
  };
}
