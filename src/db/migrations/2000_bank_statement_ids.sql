-- A bank statement's id may be recorded once per account: the import looks up the statements already
-- recorded under an id (src/ingest/bank/statement-ids.ts) without reading the account's entries.
create index if not exists es_events_bank_statement_id
  on es_events (stream_id, (data->>'statementId'))
  where type = 'BankStatementImported';
