import { DateTime } from 'luxon';
import { type BankConfig, EMPTY_BANK_CONFIG } from '../src/config/bank';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../src/events/audit-events';
import { BankEntryBooked } from '../src/events/bank-events';
import { SubMerchantRegistered } from '../src/events/ledger-events';
import { StatementIssued } from '../src/events/statement-events';
import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import { loadPayoutInputs } from '../src/reconciliation/payouts/inputs';
import { judgePayouts } from '../src/reconciliation/payouts/judge';
import { matchPayouts } from '../src/reconciliation/payouts/match';
import { type Decided, wholeRows } from '../src/reconciliation/discrepancies/lifecycle';
import { createDiscrepancyTable, discrepancyView, writeDiscrepancies } from '../src/reconciliation/discrepancies/table';
import { payoutFinding } from '../src/reconciliation/payouts/rows';
import { ident } from '../src/db/identifier';
import {
  DECISIONS,
  EXPECTED,
  eventTime,
  insertJson,
  LINES,
  PAYEES,
  payoutRowsOf,
  STILL_ASKED,
} from '../src/reconciliation/payouts/tables';
import type { RecordedEvent } from '../src/store/types';
import { CLOCK_EVENTS } from './clock-events';

/**
 * Payouts to sub-merchants (docs/bank.md, "Payouts and holds"): what each statement run asked finance to pay
 * (StatementIssued.payouts), the debits and returns on the `payouts` bank accounts, how they match, each
 * payout's status and the payout discrepancies. The inputs are kept as rows; after every batch that changes
 * them (or moves the clock to another day) the matching is computed again whole from them, so the result is a
 * function of the set of events, never of their order or of the batch sizes. "Now" is the latest time the
 * events carry (never the wall clock). Which accounts are `payouts` accounts and the days of the rules come
 * from the build's bank settings (the runner's, recorded with the build; a change rebuilds it, as for the journal).
 */

/** Matches and judges again from the inputs, and rewrites the three result tables. */
async function recompute(tx: Tx, schema: string, bank: BankConfig, zone: string, clock: number | null) {
  const s = ident(schema);
  const inputs = await loadPayoutInputs(tx, {
    schema,
    expected: 'expected',
    stillAsked: 'still_asked',
    lines: 'lines',
    payees: 'payees',
  });
  const matches = matchPayouts(inputs.expected, inputs.lines, { windowDays: bank.payouts.matchWindowDays });
  const today = clock === null ? null : DateTime.fromMillis(clock, { zone }).toISODate();
  const j = judgePayouts(inputs.expected, inputs.lines, matches.lines, { today, dueDays: bank.payouts.dueDays });
  const decisions = await loadDecisions(tx, schema);
  await tx`delete from ${tx(schema)}.payout_state`;
  await tx`delete from ${tx(schema)}.line_matches`;
  await insertJson(
    tx,
    `${s}.payout_state`,
    STATE,
    j.payouts.map((p) => ({
      reference: p.payout.reference,
      amount: p.payout.amount.toString(),
      payee_name: p.payout.payeeName,
      paid_out: p.paidOut.toString(),
      returned: p.returned.toString(),
      duplicated: p.duplicated.toString(),
      status: p.status,
      due_on: p.dueOn,
      paid_on: p.paidOn,
      bank_ref: p.bankRef,
      paid_to: p.paidTo,
    })),
  );
  await insertJson(
    tx,
    `${s}.line_matches`,
    MATCHES,
    matches.lines.map((m) => ({ event_id: m.lineId, role: m.role, reference: m.reference, matched_by: m.by })),
  );
  const findings = j.discrepancies.map((d) => payoutFinding(d, zone));
  await writeDiscrepancies(tx, schema, wholeRows(findings, decisions), 'all');
}

interface DecisionRow {
  discrepancy_id: string;
  kind: 'accepted' | 'revoked';
  accepted_by: string | null;
  note: string | null;
  at: Date;
  acceptance: string | null;
  event_id: string;
}

/** The acceptances and revocations of each discrepancy, in commit order (the core applies them in turn). */
async function loadDecisions(tx: Tx, schema: string): Promise<Map<string, Decided[]>> {
  const rows = await tx<DecisionRow[]>`
    select discrepancy_id::text, kind, accepted_by, note, at, acceptance::text, event_id::text
    from ${tx(schema)}.decisions order by commit_pos, prepare_pos`;
  const out = new Map<string, Decided[]>();
  for (const r of rows) {
    const d: Decided =
      r.kind === 'accepted'
        ? {
            kind: 'accepted',
            acceptedBy: r.accepted_by!,
            note: r.note!,
            acceptedAt: r.at.toISOString(),
            eventId: r.event_id,
          }
        : { kind: 'revoked', acceptance: r.acceptance!, revokedAt: r.at.toISOString(), eventId: r.event_id };
    out.set(r.discrepancy_id, [...(out.get(r.discrepancy_id) ?? []), d]);
  }
  return out;
}

const STATE = `reference text primary key, amount int8 not null, payee_name text not null, paid_out int8 not null, returned int8 not null,
  duplicated int8 not null, status text not null, due_on date not null, paid_on date, bank_ref text, paid_to text`;
const MATCHES = 'event_id uuid primary key, role text not null, reference text, matched_by text';

/**
 * Versions:
 * 3: the build's bank settings are the only source (no RECON_CONFIG of its own), as for the journal and the cash leg
 * 4: statuses missing and duplicated, what paid it (bank reference, account paid to); bank charges left out
 * 5: amount_in_doubt on every discrepancy row; an acceptance can be revoked (DiscrepancyAcceptanceRevoked)
 * 6: a correction stating a month lower lowers the month's earlier asks (StatementIssued stillAsked)
 * 7: the figure in force is the latest cut's (still_asked.cut); an ask lowered to 0 is still matched by its debit
 * 8: a payout the bank sent back and paid again is paid, not paid twice (a return counts before a later debit)
 * 9: a charge the bank folded into a debit (camt TxAmt + Chrgs) is not part of the payout line's amount
 * 10: amount_in_doubt_now on every discrepancy row: an accepted one follows what is in doubt now (lifecycle.ts)
 * 11: a payout's debits count in day order (match.ts `inDayOrder`; docs/ledger.md, "Read-model versions")
 * 12: discrepancies indexed in the exceptions list's order (discrepancies/table.ts), a page reads its rows
 * 13: a debit returned whole gives its folded charge back (match.ts `chargesGivenBack`)
 * 14: amount_in_doubt(_now) numeric, as every leg's (a settlement day's can pass int8)
 * 15: past_resolutions on every discrepancy row (none here: a payout's finding is judged whole, never found again)
 * 16: past_resolved_at on every discrepancy row (none here, as past_resolutions)
 * 17: past_accepted_at on every discrepancy row: a past day's report reads it accepted between an acceptance and its revocation
 */
function payoutsProjection(): Projection {
  return {
    name: 'payouts',
    version: 17,
    usesBank: true,
    // payoutRowsOf's inputs, and what moves its clock (tables.ts `eventTime`: a statement's issuedAt, a booking's day)
    handles: eventTypes(
      [StatementIssued, BankEntryBooked, SubMerchantRegistered, DiscrepancyAccepted, DiscrepancyAcceptanceRevoked],
      CLOCK_EVENTS,
    ),
    async setup(tx: Tx, ctx: ProjectionContext) {
      const s = ident(ctx.schema);
      // .unsafe: static DDL, several statements in one (the simple protocol); only the schema name is spliced, quoted
      await tx.unsafe(`
        create table ${s}.clock (id int primary key, at timestamptz);
        insert into ${s}.clock values (1, null);
        create table ${s}.expected (${EXPECTED});
        create table ${s}.still_asked (${STILL_ASKED});
        create table ${s}.lines (${LINES});
        create table ${s}.payees (${PAYEES});
        create table ${s}.decisions (${DECISIONS});
        create table ${s}.payout_state (${STATE});
        create table ${s}.line_matches (${MATCHES});`);
      await createDiscrepancyTable(tx, ctx.schema);
    },
    async apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
      const s = ident(ctx.schema);
      // the build's bank settings, recorded with it: a build never reads them from anywhere else
      const bank = ctx.bank ?? EMPTY_BANK_CONFIG;
      const [st] = await tx<{ at: Date | null }[]>`select at from ${tx(ctx.schema)}.clock where id = 1`;
      const before = st?.at ? st.at.getTime() : null;
      let clock = before;
      for (const e of events) {
        const t = eventTime(e, ctx.timezone);
        if (t !== null && (clock === null || t > clock)) clock = t;
      }
      const r = payoutRowsOf(events, bank, ctx.timezone);
      await insertJson(tx, `${s}.expected`, EXPECTED, r.expected);
      await insertJson(tx, `${s}.still_asked`, STILL_ASKED, r.stillAsked);
      await insertJson(tx, `${s}.lines`, LINES, r.lines);
      await insertJson(tx, `${s}.payees`, PAYEES, r.payees);
      await insertJson(tx, `${s}.decisions`, DECISIONS, r.decisions);
      const day = (t: number | null) =>
        t === null ? null : DateTime.fromMillis(t, { zone: ctx.timezone }).toISODate();
      const changed =
        r.expected.length + r.stillAsked.length + r.lines.length + r.payees.length + r.decisions.length > 0;
      if (clock !== before) await tx`update ${tx(ctx.schema)}.clock set at = ${new Date(clock!)} where id = 1`;
      if (changed || day(clock) !== day(before)) await recompute(tx, ctx.schema, bank, ctx.timezone, clock);
    },
    views(ctx: ProjectionContext) {
      const s = ident(ctx.schema);
      return [
        `create or replace view recon.payouts as
           select e.reference, e.sub_merchant_id, st.payee_name, e.currency, e.month, st.amount, st.paid_out, st.returned,
                  st.status, e.issued_on, st.due_on, st.paid_on, e.event_id, e.commit_pos, e.prepare_pos,
                  st.duplicated, st.bank_ref, st.paid_to, e.amount as asked
           from ${s}.expected e join ${s}.payout_state st on st.reference = e.reference`,
        `create or replace view recon.payout_lines as
           select l.event_id, l.account_id, l.currency, l.direction, l.amount, l.booking_date, m.role, m.reference, m.matched_by,
                  l.end_to_end_id, l.remittance, l.counterparty_name, l.counterparty_account, l.is_return, l.commit_pos, l.prepare_pos,
                  l.bank_ref, l.charge
           from ${s}.lines l left join ${s}.line_matches m on m.event_id = l.event_id`,
        `create or replace view recon.payout_payees as
           select event_id, sub_merchant_id, name, payout_account, commit_pos, prepare_pos from ${s}.payees`,
        `create or replace view recon.payout_expected as select * from ${s}.expected`,
        `create or replace view recon.payout_still_asked as select * from ${s}.still_asked`,
        discrepancyView(ctx.schema, 'payouts'),
      ];
    },
  };
}

export const projection: Projection = { ...payoutsProjection(), retryByReplay: true };
