-- Events a projection build could not apply, set aside so that the build goes on with the next ones
-- (docs/reliability.md, "Quarantine"). One row per build and event: a build that meets the same event again
-- (a second runner, a retry that fails again) counts an attempt on the same row. `retried` once
-- `recon quarantine retry` applied it to the build. The rows of a build go with it when it is retired.
create table projection_quarantine (
  schema_name   text not null references projection_builds (schema_name) on delete cascade,
  event_id      uuid not null,
  name          text not null,
  position      text not null,
  commit_pos    numeric(20, 0) not null,
  prepare_pos   numeric(20, 0) not null,
  stream        text not null,
  event_type    text not null,
  error         text not null,
  first_tried_at timestamptz not null default now(),
  last_tried_at  timestamptz not null default now(),
  attempts      int not null default 1,
  status        text not null default 'quarantined' check (status in ('quarantined', 'retried')),
  retried_at    timestamptz,
  primary key (schema_name, event_id)
);
create index projection_quarantine_open on projection_quarantine (name, commit_pos, prepare_pos)
  where status = 'quarantined';

create schema if not exists recon;
-- The builds in use only (building or live): what an operator and the nightly report look at.
create view recon.quarantined_events as
  select q.name as projection, q.schema_name as build, b.status as build_status, q.position, q.stream,
         q.event_id, q.event_type, q.error, q.first_tried_at, q.last_tried_at, q.attempts, q.status, q.retried_at
  from projection_quarantine q join projection_builds b on b.schema_name = q.schema_name
  where b.status in ('building', 'live');
