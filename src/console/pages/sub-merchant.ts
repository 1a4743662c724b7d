import { DateTime } from 'luxon';
import type { Sql } from '../../db/connect';
import { EMPTY_BANK_CONFIG, type BankConfig } from '../../config/bank';
import { heldAt, type HeldItem } from '../../export/payouts/holds';
import { cutDay, type PayoutStatusLine, payoutStatusesAt } from '../../export/payouts/paid-out';
import { statementRuns } from '../../export/statements/runs';
import { type LedgerAccount, receiversOf, type ReserveRow, reserveSchedule } from '../../ledger/ledger-queries';
import { ledgerBalance } from '../../ledger/balances';
import type { EventStore } from '../../store/types';
import { type Html, html } from '../html';
import { money, when } from '../i18n';
import { type View, table } from '../layout';
import { fileLink } from './statements';

/**
 * Sub-merchant: its balances now per currency (src/ledger/ledger-queries.ts: payable, reserve, fees), its
 * reserve schedule for a month, what is held from its payouts now and why, its payouts with what the bank did
 * (the payout matching's statuses, as `recon payouts` states them), and its statements to download.
 */

export interface SubMerchantRow {
  readonly sub_merchant_id: string;
  readonly name: string;
  readonly reserve_hold_days: number;
}

export async function subMerchants(sql: Sql): Promise<SubMerchantRow[] | null> {
  const [exists] = await sql<{ ok: boolean }[]>`select to_regclass('recon.sub_merchants') is not null as ok`;
  if (!exists?.ok) return null;
  // by code unit, whatever the server's collation: one directory lists alike on every server
  return sql<
    SubMerchantRow[]
  >`select sub_merchant_id, name, reserve_hold_days from recon.sub_merchants order by sub_merchant_id collate "C"`;
}

export function subMerchantsPage(v: View, rows: SubMerchantRow[] | null): Html {
  const body = (rows ?? []).map(
    (
      r,
    ) => html`<tr><td><a href="/console/sub-merchants/${encodeURIComponent(r.sub_merchant_id)}">${r.sub_merchant_id}</a></td>
<td class="text">${r.name}</td><td class="num">${r.reserve_hold_days}</td></tr>`,
  );
  return table(v.w.subMerchants, [v.w.id, v.w.name, v.w.reserve], body, rows ? v.w.noRows : v.w.noData);
}

const ACCOUNTS: readonly LedgerAccount[] = ['payable', 'reserve', 'fees'];

export interface SubMerchantData {
  readonly row: SubMerchantRow | null;
  readonly id: string;
  readonly month: string;
  readonly balances: Array<{ currency: string; amounts: bigint[] }>;
  readonly reserves: ReserveRow[];
  readonly holds: HeldItem[];
  readonly payouts: PayoutStatusLine[];
  readonly files: Array<{ month: string; name: string; issuedAt: Date }>;
}

export async function subMerchantData(
  deps: { sql: Sql; store: EventStore; timezone: string; bank?: BankConfig | undefined },
  id: string,
  month: string | null,
  now = new Date(),
): Promise<SubMerchantData> {
  const { sql } = deps;
  const m = month ?? DateTime.fromJSDate(now, { zone: deps.timezone }).toFormat('yyyy-MM');
  const all = (await subMerchants(sql)) ?? [];
  const names = all.length ? await receiversOf(sql, id) : [];
  const currencies = names.length
    ? await sql<{ currency: string }[]>`
        select distinct currency from recon.journal_lines where receiver_name = any(${names}::text[]) order by currency`
    : [];
  const balances = [];
  for (const { currency } of currencies) {
    const amounts = [];
    for (const account of ACCOUNTS)
      amounts.push(await ledgerBalance(sql, { subMerchantId: id, currency, account, at: now }));
    balances.push({ currency, amounts });
  }
  const reserves = names.length
    ? await reserveSchedule(sql, { month: m, timezone: deps.timezone, subMerchantId: id })
    : [];
  const head = await deps.store.headPosition();
  const held = head && names.length ? ((await heldAt(sql, deps.store, head)) ?? []) : [];
  const payouts = head
    ? ((await payoutStatusesAt(
        sql,
        head,
        (deps.bank ?? EMPTY_BANK_CONFIG).payouts,
        await cutDay(deps.store, head, deps.timezone),
      )) ?? [])
    : [];
  const files = (await statementRuns(sql, { limit: 500 })).flatMap((r) =>
    r.files.filter((f) => f.subMerchantId === id).map((f) => ({ month: r.month, name: f.name, issuedAt: r.issuedAt })),
  );
  return {
    row: all.find((r) => r.sub_merchant_id === id) ?? null,
    id,
    month: m,
    balances,
    reserves,
    holds: held.filter((h) => names.includes(h.receiverName)),
    payouts: payouts.filter((p) => p.subMerchantId === id),
    files,
  };
}

export function subMerchantPage(v: View, d: SubMerchantData): Html {
  const w = v.w;
  const balances = d.balances.map(
    (b) =>
      html`<tr><td>${b.currency}</td>${b.amounts.map((a) => html`<td class="num">${money(a, b.currency, v.lang)}</td>`)}</tr>`,
  );
  const reserves = d.reserves.map(
    (r) => html`<tr><td>${r.heldOn}</td><td>${r.currency}</td><td class="num">${money(r.held, r.currency, v.lang)}</td>
<td>${r.releaseOn}</td><td class="num">${money(r.released, r.currency, v.lang)}</td></tr>`,
  );
  const holds = d.holds.map(
    (
      h,
    ) => html`<tr><td class="text">${h.reason}</td><td>${h.type ?? ''}</td><td class="text">${h.paymentId ?? h.orderId ?? ''}</td>
<td>${h.currency}</td><td class="num">${money(h.amount, h.currency, v.lang)}</td></tr>`,
  );
  const payouts = d.payouts.map(
    (p) => html`<tr><td>${p.month}</td><td>${p.reference}</td><td>${p.currency}</td>
<td class="num">${money(p.amount, p.currency, v.lang)}</td><td>${p.status}</td>
<td class="num">${money(p.paidOut, p.currency, v.lang)}</td><td>${p.paidOn ?? ''}</td><td class="text">${p.bankRef ?? ''}</td></tr>`,
  );
  const files = d.files.map(
    (f) => html`<tr><td>${f.month}</td><td>${when(f.issuedAt, v.zone, v.lang)}</td><td>${fileLink(f.name)}</td></tr>`,
  );
  return html`<p><strong class="text">${d.row?.name ?? d.id}</strong> · ${d.id}</p>
<form method="get" action="/console/sub-merchants/${encodeURIComponent(d.id)}" class="filters">
<label>${w.month}<input name="month" value="${d.month}" pattern="[0-9]{4}-[0-9]{2}" size="8"></label>
<button type="submit">${w.show}</button></form>
${table(w.balances, [w.currency, w.payable, w.reserve, w.fees], balances, w.noRows)}
${table(`${w.reserveSchedule} ${d.month}`, [w.heldOn, w.currency, w.amount, w.releaseOn, w.released], reserves, w.noRows)}
${table(w.holds, [w.reason, w.type, w.payment, w.currency, w.amount], holds, w.noRows)}
${table(w.payoutsToBank, [w.month, w.statementReference, w.currency, w.amount, w.status, w.paidOut, w.paidOn, w.bankRef], payouts, w.noRows)}
${table(w.statements, [w.month, w.issued, w.files], files, w.noRows)}`;
}
