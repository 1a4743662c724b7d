/**
 * The journal's bank bookings (settlements, payouts) follow a matching that can change as data arrives. Given
 * the bookings in force (as stored) and the ones the matching wants now, this says which to reverse (they no
 * longer hold, or hold with other effects) and which to book; both lists in key order, so a replay books the
 * same entries in the same order.
 */
export interface StoredBooking {
  readonly key: string;
  readonly entryId: string;
  readonly effect: string;
}

export interface BookingChanges<B> {
  /** bookings to reverse: as they were booked, with the entry they were booked as */
  readonly reverse: ReadonlyArray<{ readonly key: string; readonly booking: B; readonly entryId: string }>;
  /** bookings to make, in key order */
  readonly book: ReadonlyArray<readonly [string, B]>;
}

export function bookingChanges<B>(
  stored: readonly StoredBooking[],
  want: ReadonlyMap<string, B>,
  decode: (key: string, effect: string) => B,
  same: (a: B, b: B) => boolean,
): BookingChanges<B> {
  const reverse: Array<{ key: string; booking: B; entryId: string }> = [];
  const kept = new Set<string>();
  for (const r of stored) {
    const had = decode(r.key, r.effect);
    const now = want.get(r.key);
    if (now && same(had, now)) kept.add(r.key);
    else reverse.push({ key: r.key, booking: had, entryId: r.entryId });
  }
  const book = [...want].filter(([k]) => !kept.has(k)).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  return { reverse, book };
}
