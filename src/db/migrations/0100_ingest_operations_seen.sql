-- Ingestion's own small index of operations, for healing (recon heal): which operations the PSP's data
-- sources show final, and whether a webhook arrived or a re-send was asked. Derived from the event
-- log by src/ingest/operations-seen.ts (catch-up from a checkpoint), so it can be rebuilt at any time.
create table ingest_operations_seen (
  pos_id              text not null,
  payment_id          text not null,
  method              text not null,
  order_id            text,
  transaction_id      text,
  recurring           boolean not null default false,
  -- success/failure as the register or the period data last showed it (null: not final there)
  final_status        text,
  -- the operation's time (dateTime), or when it was observed when the PSP gave none
  final_at            timestamptz,
  in_register         boolean not null default false,
  in_period           boolean not null default false,
  webhook_at          timestamptz,
  resend_requested_at timestamptz,
  primary key (pos_id, payment_id, method)
);

create index ingest_operations_seen_unhealed on ingest_operations_seen (pos_id, final_at)
  where final_status is not null and webhook_at is null and resend_requested_at is null;

create table ingest_checkpoints (
  name       text primary key,
  position   text not null,
  updated_at timestamptz not null default now()
);
