-- A position's commit part is the appending transaction's id (docs/store.md, "Positions and commit order").
-- That holds only while every new transaction id is above every stored one, which the server guarantees
-- for itself but not for a database restored from a logical dump (pg_dump, logical replication) into
-- another server: there the counter may be far below the restored events' ids. New events would then
-- sort before the restored ones, and every reader whose checkpoint is past them (the live projections,
-- the operations-seen follower) would never see them: silent loss. (Readers themselves skip nothing: they
-- read below the oldest running transaction, so restored events above the counter wait until it passes.)
--
-- Guard: before any insert into es_events, the last stored commit must be below the first transaction id
-- not yet assigned (pg_snapshot_xmax). On a healthy server that is always so; after such a restore every
-- append is refused (SQLSTATE RE001, recon's own code) until the counter is moved past the restored events
-- with es_advance_transaction_counter (`recon store advance-xid`).
create function es_events_commit_order_guard() returns trigger
language plpgsql
-- the lookup stays a backward scan of es_events_commit_order whatever the table's size when it was planned
set enable_seqscan = off
as $$
declare
  last_commit xid8;
  next_commit xid8;
begin
  -- One statement, so one snapshot: every event it sees was committed by a transaction below its xmax.
  -- (Read in two statements, an append committed in between by a later transaction looked like a restore.)
  select (select e.transaction_id from es_events e order by e.transaction_id desc limit 1), pg_snapshot_xmax(pg_current_snapshot())
    into last_commit, next_commit;
  if last_commit is not null and last_commit >= next_commit then
    raise exception 'event store refuses appends: the last stored event''s transaction id % is not below this server''s next transaction id %', last_commit, next_commit
      using errcode = 'RE001',
            detail = 'The database was restored from a logical dump (or copied by logical replication) into a server whose transaction counter is behind: new events would sort before stored ones and readers would skip them.',
            hint = 'Run "recon store advance-xid" (or restore a physical backup instead); see docs/store.md, "Backups and restores".';
  end if;
  return null;
end $$;

create trigger es_events_commit_order_guard before insert on es_events
  for each statement execute function es_events_commit_order_guard();

-- Moves the server's transaction counter to above `target` by starting (and committing) empty
-- transactions that take an id, each with an asynchronous commit (nothing to make durable). Called
-- outside a transaction block, in steps, by `recon store advance-xid`.
create procedure es_advance_transaction_counter(target xid8)
language plpgsql
as $$
begin
  while pg_snapshot_xmax(pg_current_snapshot()) <= target loop
    -- local to this transaction: the setting ends with the commit and never leaks into the session
    perform set_config('synchronous_commit', 'off', true);
    perform pg_current_xact_id();
    commit;
  end loop;
end $$;

revoke execute on procedure es_advance_transaction_counter(xid8) from public;
