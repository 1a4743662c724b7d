import { orderDetailText } from './orders/queries';
import { moneyText } from './discrepancy-summary';
import type { Explanation } from './explain';

/**
 * `recon explain` as text: each operation with its own receivers beneath it, amounts in major units with their
 * currency, money going back to the customer (refunds, chargebacks) negative as on statements, and the
 * journal's entries as readable lines.
 */

const OUTGOING = new Set(['refund', 'dispute']);
const SOURCES = ['register', 'period', 'webhook'] as const;

const bigOrNull = (v: unknown): bigint | null =>
  typeof v === 'bigint'
    ? v
    : typeof v === 'string' && /^-?\d+$/.test(v)
      ? BigInt(v)
      : typeof v === 'number'
        ? BigInt(v)
        : null;

/** An amount of an operation, signed as on statements (a refund or chargeback takes money back). */
function signed(v: unknown, method: unknown, currency: unknown): string {
  const x = bigOrNull(v);
  if (x === null) return '-';
  return moneyText(OUTGOING.has(String(method)) ? -x : x, typeof currency === 'string' ? currency : null);
}

function operationLines(x: Explanation): string[] {
  const out: string[] = [];
  for (const o of x.operations) {
    const src = (p: (typeof SOURCES)[number]) =>
      o[`${p}_present`]
        ? `${p} ${o[`${p}_status`]} ${signed(o[`${p}_amount`], o.method, o[`${p}_currency`] ?? o.currency)}`
        : `${p} absent`;
    out.push(`  ${o.method} #${o.ordinal} at ${o.occurred_at ?? '-'}  (${o.operation_key})`);
    out.push(`    ${SOURCES.map(src).join('; ')}`);
    for (const r of x.receivers.filter((r) => r.operation_key === o.operation_key)) {
      const c = r.currency ?? o.currency;
      out.push(
        `    receiver ${r.receiver_name} (${r.sub_merchant_id ?? 'not in the directory'}): share ${signed(r.share, o.method, c)}, fee ${signed(r.receiver_fee, o.method, c)}, reserve ${signed(r.reserve_amount, 'purchase', c)}`,
      );
    }
  }
  return out;
}

/** A journal entry: date, kind, who, and each amount with its currency. */
function journalLine(e: Record<string, unknown>): string {
  const c = typeof e.currency === 'string' ? e.currency : null;
  const m = (v: unknown) => {
    const x = bigOrNull(v);
    return x === null ? '-' : moneyText(x, c);
  };
  const release = e.release_on ? `, released on ${String(e.release_on).slice(0, 10)}` : '';
  const reverses = e.reverses ? ` reversing ${e.reverses}` : '';
  return `  ${String(e.booked_at ?? '-')}  ${e.kind}${reverses}  ${e.method} ${e.status}  ${e.receiver_name ?? 'marketplace'}: share ${m(e.share)}, fee ${m(e.fee)}, reserve ${m(e.reserve)}${release}; net to the payee ${m(e.net)}  [${e.entry_id}]`;
}

export function explanationText(x: Explanation): string {
  if (x.payments.length === 0 && !x.order) return `nothing known about ${x.query}\n`;
  const out: string[] = x.order ? [...orderDetailText(x.order), ''] : [];
  out.push(
    `${x.query}: ${x.payments.map((p) => `payment ${p.paymentId} (pos ${p.posId})`).join(', ')}`,
    '',
    'events (commit order):',
  );
  for (const e of x.events)
    out.push(`  ${e.position.padEnd(14)} ${(e.at ?? '-').padEnd(24)} ${e.type.padEnd(24)} ${e.summary}  [${e.id}]`);
  out.push('', 'operations (amounts signed as on statements: refunds and chargebacks negative):');
  out.push(...operationLines(x));
  out.push('', 'discrepancies:');
  if (!x.discrepancies.length) out.push('  none');
  for (const d of x.discrepancies)
    out.push(
      `  ${d.id} ${d.type} ${d.status}${d.receiver_name ? ` receiver=${d.receiver_name}` : ''} detected ${d.detected_at}${d.resolved_at ? ` resolved ${d.resolved_at}` : ''}${d.accepted_by ? ` accepted by ${d.accepted_by}: ${d.accepted_note}` : ''}`,
    );
  for (const [view, rows] of Object.entries(x.related)) {
    out.push('', view === 'journal_entries' ? 'journal entries:' : `recon.${view}:`);
    for (const r of rows) out.push(view === 'journal_entries' ? journalLine(r) : `  ${JSON.stringify(r)}`);
  }
  return `${out.join('\n')}\n`;
}
