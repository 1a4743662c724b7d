-- The id of the event at each checkpoint. A checkpoint is a position; after the event store is restored
-- from an older backup and appended to again (or replaced by another), the same position may hold another
-- event or none, while still being below the head, so comparing with the head cannot see it. Followers
-- (projection builds, the healing index) record the id of the last event they applied and check, before
-- reading on, that it is still the event at their checkpoint. Null: recorded at the next check (builds
-- and checkpoints made before this migration).
alter table projection_builds add column checkpoint_event_id uuid;
alter table ingest_checkpoints add column event_id uuid;
