-- The healing index is the projection operations_seen (projections/operations-seen.ts): the runner's builds,
-- checkpoints, locks and store check apply to it, and heal reads recon.operations_seen. Its own table and
-- checkpoint table are no longer used.
drop table if exists ingest_operations_seen;
drop table if exists ingest_checkpoints;
