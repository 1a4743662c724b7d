-- Ingestion's append (every request has events, every expectation is "any") as one call: see
-- appendAnyInOneStatement in src/store/postgres.ts for what it returns and why.
--
-- Why a function: its plan must not depend on the tables' size when it was made. A prepared statement
-- keeps a generic plan; one made while es_events was nearly empty read the stored ids with a sequential
-- scan, and kept doing so for every later batch as the table grew (measured on a fresh store: 13M rows
-- read for 20k webhooks, 673 µs of server CPU per webhook). The stored ids and the streams' revisions
-- are read here with lookups by key (lateral and scalar subqueries), and the function turns sequential
-- scans off for its own statements (and fences the lookup, see below), so the only plans left are
-- index lookups by key, whatever the statistics.
--
-- `rows`: one text, fields split by U+001F and rows by U+001E (JSON text never holds a raw control
-- character): ord, event id, stream, type, version, data (JSON), metadata (JSON), content hash.
create function es_append_any(rows text)
returns table (kind text, key text, value text, extra text)
language plpgsql
set enable_seqscan = off
as $$
#variable_conflict use_column
begin
  return query
  with input as (
    select f[1]::int4 as ord, f[2]::uuid as id, f[3] as stream, f[4] as type, f[5]::int4 as version,
           f[6]::json as data, f[7]::json as metadata, f[8] as hash
    from (select string_to_array(r, E'\x1f') as f from string_to_table(rows, E'\x1e') as r) as split),
  probed as materialized (
    select i.*, stored.stream_id as stored_stream, stored.content_hash as stored_hash
    from input i left join lateral (
      -- offset 0 keeps this a lookup per event: pulled up into a join, it became a hash join over a
      -- scan of the whole event_id index for every batch.
      select e.stream_id, e.content_hash from es_events e where e.event_id = i.id offset 0) as stored on true),
  conflicting as (
    select 1 from probed p where p.stored_stream <> p.stream or p.stored_hash <> p.hash),
  fresh as materialized (
    select p.*, row_number() over w as n, count(*) over w as total from probed p
    where p.stored_stream is null
    window w as (partition by p.stream order by p.ord rows between unbounded preceding and unbounded following)),
  -- Each stream with new events moves on by their number, in one upsert that also takes the stream's
  -- row lock, in stream order (concurrent appends cannot deadlock).
  locked as (
    insert into es_streams as s (stream_id, revision)
    select distinct on (f.stream) f.stream, f.total - 1 from fresh f
    where not exists (select 1 from conflicting) order by f.stream
    on conflict (stream_id) do update set revision = s.revision + excluded.revision + 1
    returning s.stream_id, s.revision),
  -- The new revisions as one jsonb lookup: a join of the events to these CTEs, whose sizes the planner
  -- cannot estimate, ran as a nested loop (quadratic in the batch size).
  moved as materialized (select jsonb_object_agg(l.stream_id, l.revision) as revisions from locked l),
  inserted as (
    insert into es_events (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
    select f.id, f.stream, (m.revisions ->> f.stream)::int8 - f.total + f.n, f.type, f.version, f.data, f.metadata, f.hash
    from fresh f cross join moved m
    where m.revisions ->> f.stream is not null
    order by f.ord
    returning es_events.stream_id, es_events.global_position, es_events.transaction_id)
  select 'k'::text, p.id::text, p.stored_stream, p.stored_hash from probed p where p.stored_stream is not null
  union all select 's', l.stream_id, l.revision::text, null from locked l
  union all
    select 'c', st.stream, (select s.revision from es_streams s where s.stream_id = st.stream)::text, null
    from (select p.stream from probed p where p.stored_stream is not null except select f.stream from fresh f) as st
  union all select 'e', i.stream_id, i.global_position::text, i.transaction_id::text from inserted i;
end $$;

-- Only the owner (recon itself) appends; the auditor role and any other may not even call it.
revoke execute on function es_append_any(text) from public;
