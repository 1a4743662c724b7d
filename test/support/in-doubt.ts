/**
 * A discrepancy row read from a recon.* view with its amounts in doubt as bigint: the columns are numeric (a
 * settlement day's sum can pass int8), which the driver gives as text.
 */
export function inDoubtAsBigint<T extends object>(row: T): T {
  const out: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const k of ['amount_in_doubt', 'amount_in_doubt_now'])
    if (typeof out[k] === 'string') out[k] = BigInt(out[k] as string);
  return out as T;
}
