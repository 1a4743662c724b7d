-- Projection runner: one row per build of a read model. A build owns a schema of its own
-- (rm_<name>_v<version>_b<build>); the live build of each projection is what the views in schema
-- `recon` point at. A new version (or a forced rebuild) builds beside the live one and replaces it
-- when caught up.
create schema if not exists recon;

create table projection_builds (
  schema_name        text primary key,
  name               text not null,
  version            int not null,
  build              int not null,
  status             text not null check (status in ('building', 'live', 'retired')),
  -- last event applied ("commit/prepare"); null: nothing applied yet
  checkpoint         text,
  checkpoint_commit  numeric(20, 0),
  checkpoint_prepare numeric(20, 0),
  events_applied     bigint not null default 0,
  created_at         timestamptz not null default now(),
  live_at            timestamptz,
  retired_at         timestamptz,
  updated_at         timestamptz not null default now(),
  constraint projection_builds_name_build unique (name, build)
);

-- At most one live and one building build per projection.
create unique index projection_builds_one_live on projection_builds (name) where status = 'live';
create unique index projection_builds_one_building on projection_builds (name) where status = 'building';

-- Wakes live followers (recon worker) as soon as events are committed; statement-level, so one
-- notification per append whatever its size.
create function es_events_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('recon_events', '');
  return null;
end $$;
create trigger es_events_notify after insert on es_events
  for each statement execute function es_events_notify();
