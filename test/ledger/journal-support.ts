import type { NormalizedRegisterRecord, OperationMethod } from '../../src/events/ingest-events';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import type { RunnerDeps } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import type { EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { useTestStore, type TestDatabase } from '../support/db';

export const TZ = 'Europe/Kyiv';

export type RecordFields = Partial<NormalizedRegisterRecord> & {
  paymentId: string;
  method: OperationMethod;
  dateTime: string | null;
};

/** Register rows of `pos`: `record` fills what a test leaves out; `splitRow` is one receiver's share of a split sale. */
export function registerRows(pos: string) {
  const record = (p: RecordFields): NormalizedRegisterRecord => ({
    projectId: pos,
    orderId: `order-${p.paymentId}`,
    status: 'success',
    currency: 'EUR',
    amount: null,
    originalAmount: null,
    customerFee: '0',
    merchantFee: null,
    receiverName: null,
    receiverAmount: null,
    receiverFee: null,
    reserveAmount: null,
    cardMask: null,
    payway: 'card',
    other: {},
    ...p,
  });
  /** A split sale: each receiver's share = amount + fee. */
  const splitRow = (
    paymentId: string,
    dateTime: string,
    receiver: string,
    amount: bigint,
    fee: bigint,
    reserve: bigint,
    extra: Partial<NormalizedRegisterRecord> = {},
  ) =>
    record({
      paymentId,
      method: 'purchase',
      dateTime,
      receiverName: receiver,
      receiverAmount: String(amount),
      receiverFee: String(fee),
      reserveAmount: String(reserve),
      originalAmount: '100000',
      merchantFee: '900',
      ...extra,
    });
  return { record, splitRow };
}

/** Imports a sub-merchant directory CSV (no projection run). */
export async function importCsv(store: EventStore, csv: string): Promise<void> {
  const parsed = parseSubMerchantCsv(csv, 'directory.csv');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  await importSubMerchants(store, parsed.rows);
}

/** useTestStore() plus the journal projection's runner deps in TZ (read in hooks and tests only). */
export function useJournalStore(): {
  readonly db: TestDatabase;
  readonly store: EventStore;
  readonly deps: RunnerDeps;
} {
  const fx = useTestStore();
  let deps: RunnerDeps | undefined;
  return {
    get db() {
      return fx.db;
    },
    get store() {
      return fx.store;
    },
    get deps() {
      deps ??= {
        sql: fx.db.sql,
        store: fx.store,
        log: silentLogger,
        timezone: TZ,
        graceHours: 48,
        projections: [journal],
      };
      return deps;
    },
  };
}
