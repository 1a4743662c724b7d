import { uuidV5 } from '../../canonical';
import { eventIdFor } from '../../events/ids';
import { type DiscrepancyType, entryOf, type Leg } from './registry';

/**
 * The id of a discrepancy: a function of its type and its key (what names it for good in its leg: an
 * operation and receiver, an order and payment, a settlement day, a payout's reference or a bank line), so a
 * replay finds the same id and an auditor's acceptance (DiscrepancyAccepted names the id) keeps to it.
 *
 * Each leg's ids were first stored with a text of its own around type and key; the texts are kept, by leg,
 * so that no stored id (and no acceptance naming one) changes. A new type takes its leg's text: nothing here
 * names a type.
 */
const ID_TEXT: Readonly<Record<Leg, (type: DiscrepancyType, key: string) => string>> = {
  psp: (type, key) => uuidV5(`discrepancy\n${type}\n${key}`),
  orders: (type, key) => uuidV5(`order-discrepancy\n${type}\n${key}`),
  settlement: (type, key) => uuidV5(`${type}|${key}`),
  payouts: (type, key) => eventIdFor('payout-discrepancy', { type, key }),
};

// Ids are asked for again every time a payment is judged; a hash each time was a tenth of the judging.
// Bounded: cleared when full, so memory stays flat however many discrepancies a build sees.
const ids = new Map<string, string>();

/** The deterministic id of the discrepancy of `type` named by `key` in its leg. */
export function discrepancyId(type: DiscrepancyType, key: string): string {
  const name = `${type}\n${key}`;
  let id = ids.get(name);
  if (id === undefined) {
    if (ids.size >= 20_000) ids.clear();
    id = ID_TEXT[entryOf(type).leg](type, key);
    ids.set(name, id);
  }
  return id;
}
