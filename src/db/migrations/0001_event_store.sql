-- Event store (PostgreSQL backend). Append-only: events are never updated or deleted.
create table es_streams (
  stream_id text primary key,
  -- revision of the last event in the stream; -1 while the stream is being created
  revision  bigint not null
);

create table es_events (
  -- "prepare" part of a position: a sequence, unique but NOT in commit order on its own
  global_position bigserial primary key,
  -- "commit" part: the appending transaction's id. Readers only see transactions below the oldest
  -- running one (pg_snapshot_xmin), so a slow transaction can never be skipped by a follower.
  transaction_id  xid8 not null default pg_current_xact_id(),
  event_id        uuid not null,
  stream_id       text not null,
  stream_revision bigint not null,
  type            text not null,
  version         int not null,
  data            jsonb not null,
  metadata        jsonb not null default '{}'::jsonb,
  -- sha-256 of the canonical {type, version, data}: a re-sent event id must carry the same content
  content_hash    text not null,
  recorded_at     timestamptz not null default now(),
  constraint es_events_event_id_unique unique (event_id),
  constraint es_events_stream_revision_unique unique (stream_id, stream_revision)
);

create index es_events_commit_order on es_events (transaction_id, global_position);

-- Append-only, enforced: only inserts are allowed.
create function es_events_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'es_events is append-only (% refused)', tg_op using errcode = '42501';
end $$;
create trigger es_events_no_update before update or delete on es_events
  for each row execute function es_events_append_only();
create trigger es_events_no_truncate before truncate on es_events
  for each statement execute function es_events_append_only();
