import { entriesFor, settlementOf, type DraftEntry, type RowFacts } from '../journal-rules';

/**
 * What is in force for a register row, kept compact in `register_rows.effect`: the inputs the entries are a
 * pure function of (with the build's time zone), not the entries themselves. `[]` when the row has no
 * entries in force (a success row observed again as pending). The entries are recomputed when they must
 * be reversed, with the ids they were written under (`<event id>:<n>`).
 */
export type Effect =
  | []
  | [
      eventId: string,
      settlement: 'sale' | 'refund' | 'chargeback',
      owner: 'm' | 'r',
      share: string,
      fee: string,
      reserve: string,
      at: string,
      on: string,
      hold: number,
    ];

const METHOD_OF = { sale: 'purchase', refund: 'refund', chargeback: 'dispute' } as const;

export function effectOf(eventId: string, f: RowFacts, hold: number, drafts: readonly DraftEntry[]): Effect {
  if (drafts.length === 0) return [];
  return [
    eventId,
    settlementOf(f.method) as 'sale',
    f.receiver === null ? 'm' : 'r',
    f.share.toString(),
    f.fee.toString(),
    f.reserve.toString(),
    f.bookedAt.toISOString(),
    f.bookedOn,
    hold,
  ];
}

export interface InForce {
  readonly eventId: string;
  readonly share: bigint;
  readonly fee: bigint;
  readonly reserve: bigint;
  readonly drafts: readonly DraftEntry[];
}

export function inForce(effect: Effect, timezone: string): InForce | undefined {
  if (effect.length === 0) return undefined;
  const [eventId, settlement, owner, share, fee, reserve, at, on, hold] = effect;
  const f: RowFacts = {
    rowKey: '',
    posId: '',
    orderId: null,
    paymentId: '',
    method: METHOD_OF[settlement],
    status: 'success',
    receiver: owner === 'm' ? null : '-',
    currency: '',
    share: BigInt(share),
    fee: BigInt(fee),
    reserve: BigInt(reserve),
    bookedAt: new Date(at),
    bookedOn: on,
  };
  return { eventId, share: f.share, fee: f.fee, reserve: f.reserve, drafts: entriesFor(f, hold, timezone) };
}

/** What makes two observations of a row equivalent for the journal: the entries' dates and lines. */
export function sameEntries(a: readonly DraftEntry[], b: readonly DraftEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (
      x.kind !== y.kind ||
      x.bookedAt.getTime() !== y.bookedAt.getTime() ||
      x.releaseOn !== y.releaseOn ||
      x.lines.length !== y.lines.length
    )
      return false;
    for (let j = 0; j < x.lines.length; j++) {
      const l = x.lines[j]!;
      const m = y.lines[j]!;
      if (l.account !== m.account || l.component !== m.component || l.amount !== m.amount) return false;
    }
  }
  return true;
}
