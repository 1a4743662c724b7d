-- The guard of 0600 compares the last stored event's transaction id with the snapshot's xmax. A snapshot's
-- xmax is one past the latest *completed* transaction, so inside a transaction that has already stored an
-- event (its own id is the newest, not completed yet) a second insert saw its own event as "at or above the
-- next transaction id" and was refused as if the store had been restored. recon's store inserts once per
-- transaction, but nothing else should be refused for doing twice what is allowed once: the transaction's own
-- events are left out of the comparison.
create or replace function es_events_commit_order_guard() returns trigger
language plpgsql
set enable_seqscan = off
as $$
declare
  last_commit xid8;
  next_commit xid8;
begin
  -- One statement, so one snapshot: every event it sees was committed by a transaction below its xmax, or
  -- is this transaction's own.
  select (select e.transaction_id from es_events e
          where e.transaction_id <> coalesce(pg_current_xact_id_if_assigned(), '0'::xid8)
          order by e.transaction_id desc limit 1),
         pg_snapshot_xmax(pg_current_snapshot())
    into last_commit, next_commit;
  if last_commit is not null and last_commit >= next_commit then
    raise exception 'event store refuses appends: the last stored event''s transaction id % is not below this server''s next transaction id %', last_commit, next_commit
      using errcode = 'RE001',
            detail = 'The database was restored from a logical dump (or copied by logical replication) into a server whose transaction counter is behind: new events would sort before stored ones and readers would skip them.',
            hint = 'Run "recon store advance-xid" (or restore a physical backup instead); see docs/store.md, "Backups and restores".';
  end if;
  return null;
end $$;
