-- The guard of 0600/1000 reads the last stored commit leaving out the inserting transaction's own events with
-- one backward scan of es_events_commit_order that filters them out. Those events are the newest, at the top
-- of the index, so a transaction that inserts many times (the bulk append inserts chunk after chunk, see
-- src/store/postgres-bulk.ts) scanned past all it had inserted before, at every insert: quadratic in the
-- bulk (a camt.053 of a million entries took 217 s against 13 s for a tenth of it). The same bound from two
-- probes of the index, each a lookup by key: the last commit below this transaction's id and the last above
-- it (a restored event ahead of the counter is above it).
create or replace function es_events_commit_order_guard() returns trigger
language plpgsql
set enable_seqscan = off
as $$
declare
  own xid8 := pg_current_xact_id_if_assigned();
  last_commit xid8;
  next_commit xid8;
begin
  -- One statement, so one snapshot: every event it sees was committed by a transaction below its xmax, or
  -- is this transaction's own.
  if own is null then
    select (select e.transaction_id from es_events e order by e.transaction_id desc limit 1),
           pg_snapshot_xmax(pg_current_snapshot())
      into last_commit, next_commit;
  else
    select greatest(
             (select e.transaction_id from es_events e where e.transaction_id > own
              order by e.transaction_id desc limit 1),
             (select e.transaction_id from es_events e where e.transaction_id < own
              order by e.transaction_id desc limit 1)),
           pg_snapshot_xmax(pg_current_snapshot())
      into last_commit, next_commit;
  end if;
  if last_commit is not null and last_commit >= next_commit then
    raise exception 'event store refuses appends: the last stored event''s transaction id % is not below this server''s next transaction id %', last_commit, next_commit
      using errcode = 'RE001',
            detail = 'The database was restored from a logical dump (or copied by logical replication) into a server whose transaction counter is behind: new events would sort before stored ones and readers would skip them.',
            hint = 'Run "recon store advance-xid" (or restore a physical backup instead); see docs/store.md, "Backups and restores".';
  end if;
  return null;
end $$;
