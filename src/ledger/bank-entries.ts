import { qualified } from '../db/identifier';
import { copyRows, type Cell } from '../projector/copy-rows';
import type { Tx } from '../projector/projection';
import type { RecordedEvent } from '../store/types';
import { localMidnight } from '../journal-rules';

/**
 * The journal entries of the bank's side (a settlement credit cleared, a payout paid): one writer for both, so
 * that a booking and its reversal always fill the entries and lines tables the same way.
 */

/** A bank booking as the journal records it; amounts as booked (a reversal is written with the opposite sign). */
export interface BankEntry {
  readonly kind: 'bank_settlement' | 'payout' | 'bank_charge';
  /** the journal's row key of the booking (`bank:<credit>`, `payout:<line>`, `charge:<line>`) */
  readonly rowKey: string;
  /** the bank account, in the entry's pos_id column */
  readonly accountId: string;
  /** the bank line's event id, in the entry's payment_id column */
  readonly lineId: string;
  readonly method: string;
  readonly status: string;
  readonly receiver: string | null;
  readonly currency: string;
  readonly share: bigint;
  readonly fee: bigint;
  /** effect on the payable, credit positive */
  readonly net: bigint;
  readonly bookedOn: string;
  readonly lines: readonly { readonly account: string; readonly component: string; readonly amount: bigint }[];
}

export interface WrittenEntries {
  readonly entries: Cell[][];
  readonly lines: Cell[][];
}

const ENTRY_COLUMNS = [
  'entry_id',
  'kind',
  'reverses',
  'row_key',
  'pos_id',
  'payment_id',
  'method',
  'status',
  'receiver',
  'currency',
  'share',
  'fee',
  'reserve',
  'net',
  'booked_at',
  'booked_on',
  'event_ids',
  'commit_pos',
  'prepare_pos',
];
/** The columns of the journal's lines, as every entry of the journal writes them. */
export const JOURNAL_LINE_COLUMNS = [
  'entry_id',
  'line_no',
  'account',
  'receiver',
  'component',
  'currency',
  'amount',
  'booked_at',
  'commit_pos',
  'prepare_pos',
];

export const noEntries = (): WrittenEntries => ({ entries: [], lines: [] });

/** The entry `entryId` of a booking made (or, with `reverses`, reversed) by the event `by`, dated on its booking day. */
export function writeBankEntry(
  out: WrittenEntries,
  entryId: string,
  e: BankEntry,
  by: RecordedEvent,
  reverses: string | null,
  tz: string,
): void {
  const sign = reverses === null ? 1n : -1n;
  const at = localMidnight(e.bookedOn, tz).toISOString();
  const pos = [by.position.commit.toString(), by.position.prepare.toString()];
  out.entries.push([
    entryId,
    reverses === null ? e.kind : 'reversal',
    reverses,
    e.rowKey,
    e.accountId,
    e.lineId,
    e.method,
    e.status,
    e.receiver,
    e.currency,
    sign * e.share,
    sign * e.fee,
    0n,
    sign * e.net,
    at,
    e.bookedOn,
    by.id === e.lineId ? `{${by.id}}` : `{${by.id},${e.lineId}}`,
    ...pos,
  ]);
  e.lines.forEach((l, n) => {
    out.lines.push([entryId, n, l.account, e.receiver, l.component, e.currency, sign * l.amount, at, ...pos]);
  });
}

export async function copyBankEntries(tx: Tx, schema: string, out: WrittenEntries): Promise<void> {
  await copyRows(tx, qualified(schema, 'entries'), ENTRY_COLUMNS, out.entries);
  await copyRows(tx, qualified(schema, 'lines'), JOURNAL_LINE_COLUMNS, out.lines);
}
