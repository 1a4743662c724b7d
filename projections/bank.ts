import { ident, qualified } from '../src/db/identifier';
import { BankEntryBooked, BankEntryForUnknownAccount, BankStatementImported } from '../src/events/bank-events';
import { isEvent } from '../src/events/catalog';
import { eventTypes } from '../src/projector/handlers';
import { copyRows, type Cell } from '../src/projector/copy-rows';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * The bank statements and their booked entries as imported (docs/bank.md): what payouts and the cash leg
 * match against, and what auditors trace a bank line back to (statement, file hash, event). One row per
 * event: the import appends each entry and statement once.
 */

const ENTRY_COLUMNS = [
  'event_id',
  'account_id',
  'currency',
  'direction',
  'amount',
  'signed_amount',
  'booking_date',
  'value_date',
  'bank_ref',
  'batch_ref',
  'detail',
  'end_to_end_id',
  'remittance',
  'counterparty_name',
  'counterparty_account',
  'is_return',
  'transaction_code',
  'statement_id',
  'commit_pos',
  'prepare_pos',
];

const STATEMENT_COLUMNS = [
  'event_id',
  'account_id',
  'currency',
  'statement_id',
  'format',
  'opening_date',
  'closing_date',
  'opening_balance',
  'closing_balance',
  'entries',
  'file_sha256',
  'commit_pos',
  'prepare_pos',
];

const UNKNOWN_COLUMNS = [
  'event_id',
  'account',
  'currency',
  'statement_id',
  'file',
  'entries',
  'file_sha256',
  'commit_pos',
  'prepare_pos',
];

export const projection: Projection = {
  name: 'bank',
  version: 1,
  handles: eventTypes([BankEntryBooked, BankStatementImported, BankEntryForUnknownAccount]),

  async setup(tx: Tx, ctx: ProjectionContext) {
    const s = tx(ctx.schema);
    // DDL of several statements: the simple protocol (no parameters; the schema is an identifier)
    await tx`
      create table ${s}.entries (
        event_id uuid primary key,
        account_id text not null,
        currency text not null,
        direction text not null check (direction in ('credit', 'debit')),
        amount bigint not null check (amount >= 0),
        -- credit positive, debit negative: sums are balances
        signed_amount bigint not null,
        booking_date date not null,
        value_date date,
        bank_ref text,
        batch_ref text,
        detail int not null,
        end_to_end_id text,
        remittance text,
        counterparty_name text,
        counterparty_account text,
        is_return boolean not null,
        transaction_code text,
        statement_id text not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
      create index on ${s}.entries (account_id, booking_date);
      create table ${s}.statements (
        event_id uuid primary key,
        account_id text not null,
        currency text not null,
        statement_id text not null,
        format text not null,
        opening_date date not null,
        closing_date date not null,
        opening_balance bigint not null,
        closing_balance bigint not null,
        entries int not null,
        file_sha256 text not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
      create index on ${s}.statements (account_id, closing_date);
      create table ${s}.unknown_accounts (
        event_id uuid primary key,
        account text not null,
        currency text,
        statement_id text,
        file text not null,
        entries int not null,
        file_sha256 text not null,
        commit_pos numeric(20,0) not null,
        prepare_pos numeric(20,0) not null
      );
    `.simple();
  },

  async apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext) {
    const entries: Cell[][] = [];
    const statements: Cell[][] = [];
    const unknown: Cell[][] = [];
    for (const e of events) {
      const pos = [e.position.commit, e.position.prepare];
      if (isEvent(BankEntryBooked, e)) {
        const d = BankEntryBooked.schema.parse(e.data);
        const signed = d.direction === 'credit' ? d.amount : `-${d.amount}`;
        entries.push([
          e.id,
          d.accountId,
          d.currency,
          d.direction,
          d.amount,
          signed === '-0' ? '0' : signed,
          d.bookingDate,
          d.valueDate,
          d.bankRef,
          d.batchRef,
          d.detail,
          d.endToEndId,
          d.remittance,
          d.counterpartyName,
          d.counterpartyAccount,
          d.isReturn,
          d.transactionCode,
          d.statementId,
          ...pos,
        ]);
      } else if (isEvent(BankStatementImported, e)) {
        const d = BankStatementImported.schema.parse(e.data);
        statements.push([
          e.id,
          d.accountId,
          d.currency,
          d.statementId,
          d.format,
          d.openingDate,
          d.closingDate,
          d.openingBalance,
          d.closingBalance,
          d.entries,
          d.fileSha256,
          ...pos,
        ]);
      } else if (isEvent(BankEntryForUnknownAccount, e)) {
        const d = BankEntryForUnknownAccount.schema.parse(e.data);
        unknown.push([e.id, d.account, d.currency, d.statementId, d.file, d.entries, d.fileSha256, ...pos]);
      }
    }
    await copyRows(tx, qualified(ctx.schema, 'entries'), ENTRY_COLUMNS, entries);
    await copyRows(tx, qualified(ctx.schema, 'statements'), STATEMENT_COLUMNS, statements);
    await copyRows(tx, qualified(ctx.schema, 'unknown_accounts'), UNKNOWN_COLUMNS, unknown);
  },

  views(ctx: ProjectionContext) {
    const s = ident(ctx.schema);
    const pos = `commit_pos::text || '/' || prepare_pos::text as position`;
    return [
      `create or replace view recon.bank_entries as
         select event_id, account_id, currency, direction, amount, signed_amount, booking_date, value_date, bank_ref,
                batch_ref, detail, end_to_end_id, remittance, counterparty_name, counterparty_account, is_return,
                transaction_code, statement_id, ${pos}
         from ${s}.entries`,
      `create or replace view recon.bank_statements as
         select event_id, account_id, currency, statement_id, format, opening_date, closing_date, opening_balance,
                closing_balance, entries, file_sha256, ${pos}
         from ${s}.statements`,
      `create or replace view recon.bank_unknown_accounts as
         select event_id, account, currency, statement_id, file, entries, file_sha256, ${pos}
         from ${s}.unknown_accounts`,
    ];
  },
};
