/**
 * The sub-merchant directory as the reconciliation needs it: a receiver name in a PSP row → the
 * sub-merchant id. A renamed sub-merchant keeps its rows under its former name (the id that last held a
 * name no id holds now), as in the journal's views and the statements.
 */
export interface SubMerchantNames {
  /** sub_merchant_id → name and the event that gave it */
  readonly byId: Map<string, { name: string; eventId: string }>;
  /** name → the id that last held it (a name given up by a rename) */
  readonly former: Map<string, { id: string; eventId: string }>;
  /** ids and former names this batch changed (written back) */
  readonly changedIds: Set<string>;
  readonly changedFormer: Set<string>;
  /** receiver name → id, built when first asked and dropped when the directory changes */
  lookup: ((name: string) => string | undefined) | null;
}

export function subMerchantNames(
  byId: Map<string, { name: string; eventId: string }>,
  former: Map<string, { id: string; eventId: string }>,
): SubMerchantNames {
  return { byId, former, changedIds: new Set(), changedFormer: new Set(), lookup: null };
}

export function subMerchantLookup(n: SubMerchantNames): (name: string) => string | undefined {
  if (n.lookup) return n.lookup;
  const byName = new Map<string, string>();
  // Latest registration of a name wins; entries are sorted by id so ties never depend on load order.
  for (const [id, v] of [...n.byId.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
    if (!byName.has(v.name)) byName.set(v.name, id);
  n.lookup = (name) => byName.get(name.trim()) ?? n.former.get(name.trim())?.id;
  return n.lookup;
}

/** Records a registration; returns the receiver names whose sub-merchant may have changed. */
export function register(n: SubMerchantNames, id: string, rawName: string, eventId: string): Set<string> {
  const name = rawName.trim();
  const old = n.byId.get(id);
  n.byId.set(id, { name, eventId });
  n.changedIds.add(id);
  if (old && old.name !== name) {
    n.former.set(old.name, { id, eventId });
    n.changedFormer.add(old.name);
  }
  n.lookup = null;
  return new Set([name, ...(old ? [old.name] : [])]);
}
