import { ident } from '../src/db/identifier';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../src/events/audit-events';
import { eventTypes, isAnyOf } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import {
  decideSettlementDiscrepancies,
  type DiscrepancyMemory,
  discrepanciesOf,
  syncDiscrepancies,
  writeOffsOf,
  writeOffTable,
} from '../src/reconciliation/settlement/discrepancies';
import { recoveriesOf, type WriteOffInForce } from '../src/reconciliation/settlement/recovered';
import { readModelTables, writeReadModel } from '../src/reconciliation/settlement/read-model';
import { createDiscrepancyTable, discrepancyView } from '../src/reconciliation/discrepancies/table';
import {
  appendsOf,
  applyCashAppend,
  CASH_EVENTS,
  bankOf,
  cashEventsIn,
  cashStateTables,
  holidaysOf,
  judgeCurrency,
  newCashMemory,
} from '../src/reconciliation/settlement/state';
import type { RecordedEvent } from '../src/store/types';

/**
 * The cash leg (docs/bank.md, "The cash leg"): what the PSP owes the marketplace per currency and
 * settlement day, the credits on `settlement` accounts, the matches and the discrepancies. Judged once
 * per append (the runner never splits one), from the events alone, so a rebuild equals the live build
 * whatever its batches; within a batch from state kept in memory, so an append costs its own rows.
 */

async function setup(tx: Tx, ctx: ProjectionContext) {
  const s = ident(ctx.schema);
  // .unsafe: static DDL, several statements in one (the simple protocol); only the schema name is spliced, quoted
  await tx.unsafe(`${cashStateTables(s)} ${readModelTables(s)} ${writeOffTable(s)}`);
  await createDiscrepancyTable(tx, ctx.schema, { indexes: ['(currency)'] });
}

const DECISIONS = [DiscrepancyAccepted, DiscrepancyAcceptanceRevoked];

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
  const decides = events.some((e) => isAnyOf(DECISIONS, e));
  if (!cashEventsIn(events) && !decides) return;
  const s = bankOf(ctx).settlement;
  const rules = { lateBusinessDays: s.lateBusinessDays, holidays: holidaysOf(ctx) };
  // the discrepancies' lifecycle is judged per append; the read model is a function of the state alone,
  // so it is written once per batch with each currency's last judgement
  const last = new Map<string, Awaited<ReturnType<typeof judgeCurrency>>>();
  // each currency's state and discrepancies are read once per batch and then followed in memory (why a
  // judgement from memory equals one from the tables: `CashMemory`, `DiscrepancyMemory`)
  const cash = newCashMemory();
  let found: DiscrepancyMemory = new Map();
  let writtenOff = new Map<string, WriteOffInForce[]>();
  for (const append of appendsOf(events)) {
    // a revoked acceptance opens its discrepancy again, a write-off's money may have come: its currency is
    // judged again in this append
    const decided = decides && append.some((e) => isAnyOf(DECISIONS, e));
    const reopened = decided ? await decideSettlementDiscrepancies(tx, ctx.schema, append) : new Set<string>();
    // a decision changed rows behind the memory: they are read again
    if (decided) {
      found = new Map();
      writtenOff = new Map();
    }
    const touched = cashEventsIn(append) ? await applyCashAppend(tx, ctx.schema, append, ctx, cash) : new Set<string>();
    for (const currency of [...new Set([...touched, ...reopened])].sort()) {
      const j = await judgeCurrency(tx, ctx.schema, currency, ctx, cash);
      last.set(currency, j);
      const now = discrepanciesOf(currency, j, rules, ctx.timezone);
      const recovered = recoveriesOf(currency, j, now, await writeOffsOf(tx, ctx.schema, currency, writtenOff));
      const open = recovered.length ? new Set([...j.missing, ...j.inTransit].map((d) => d.day)) : undefined;
      await syncDiscrepancies(tx, ctx.schema, currency, now, append[append.length - 1]!, found, recovered, open);
    }
  }
  for (const [currency, j] of last) await writeReadModel(tx, ctx.schema, currency, j, rules);
}

function views(ctx: ProjectionContext): readonly string[] {
  const s = ident(ctx.schema);
  return [
    `create or replace view recon.settlements_expected as
       select currency, due_on, activity_from, activity_to, clearing, fees, amount, deadline, status, credit_event_id, received_on
       from ${s}.expected`,
    `create or replace view recon.settlement_matches as
       select credit_event_id, account_id, currency, booked_on, bank_ref, received, expected, bank_fee, shortfall, due_on, late_days
       from ${s}.matches`,
    `create or replace view recon.settlement_bank_lines as
       select c.event_id, c.account_id, c.currency, c.direction, c.amount - coalesce(r.charge, 0) as amount,
              c.booking_date, c.value_date, c.bank_ref, c.end_to_end_id, c.remittance, c.counterparty_name,
              c.statement_id, m.credit_event_id is not null as matched
       from ${s}.cash_credits c left join ${s}.matches m on m.credit_event_id = c.event_id
         left join ${s}.charges_returned r on r.credit_event_id = c.event_id`,
    `create or replace view recon.settlement_statements as
       select account_id, statement_id, currency, opening_date, closing_date, opening_balance, closing_balance, event_id
       from ${s}.cash_statements`,
    discrepancyView(ctx.schema, 'settlement'),
  ];
}

// 2: DiscrepancyAccepted accepts a settlement discrepancy
// 3: the bank's charges on a settlement account are left out of the lines (the journal books them as bank fees)
// 4: amount_in_doubt on every discrepancy row; an acceptance can be revoked (DiscrepancyAcceptanceRevoked)
// 5: a credit the bank reversed since (a debit marked as a return) pays no due day, nor a credit marked as a
//    return (cash_credits.is_return)
// 6: a short payment's rest paid by a second credit pays the day in full (match.ts rule 3)
// 7: of the credits that fit a short's rest, the closest, one handed over to a short with no other (rule 3)
// 8: a write-off whose money came since opens a settlement_recovered (table write_offs; recovered.ts)
// 9: amount_in_doubt_now on every discrepancy row: an accepted one follows what is in doubt now (lifecycle.ts)
// 10: a settlement_unexpected written off (a gain) whose credit is no longer unexpected opens a
//    settlement_gain_taken_back (write_offs keeps those write-offs too)
// 11: a settlement credit the bank deducted its charge from (camt TxAmt − Chrgs = Amt, MT940 /OCMT/ − /CHGS/) pays
//    at TxAmt (cash_credits.amount; bank-charges.ts `deductedChargeOf`)
// 12: such a credit taken back by the bank at what it credited reads at that in settlement_bank_lines (table
//    charges_returned): the journal reverses its charge; a settlement_recovered no credit paid whose days are open
//    again has owed_again_on (discrepancies.ts recoveredFinding)
// 13: a credit that equals a run of due days exactly pays it before any credit is matched within the tolerance
//    (match.ts rule 1): a credit equal to one day was taken as another day less a bank charge
// 18: discrepancies indexed in the exceptions list's order (discrepancies/table.ts), a page reads its rows
// 19: a day's sums, what a settlement day owes and the amounts in doubt are numeric: a day of 9,224 rows at the
//    largest amount passed int8 and its later rows were set aside (docs/ledger.md, "Read-model versions")
// 20: past_resolutions on every discrepancy row: a cut between a resolution and the finding again reads it resolved
// 21: past_resolved_at on every discrepancy row: a past day's report reads it resolved between a resolution and the finding again
// 22: past_accepted_at on every discrepancy row: a past day's report reads it accepted between an acceptance and its revocation
export const projection: Projection = {
  name: 'settlement',
  version: 22,
  usesBank: true,
  retryByReplay: true,
  handles: eventTypes(CASH_EVENTS, DECISIONS),
  setup,
  apply,
  views,
};
