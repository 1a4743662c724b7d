-- Exports and jobs (0300–0399).

-- Every statement run: what was cut, where, and which files were produced, so that finance can prove
-- what was sent. The same facts are appended as a StatementIssued event (stream statements-YYYY-MM).
create table statement_runs (
  run_id          uuid primary key,
  month           text not null check (month ~ '^\d{4}-\d{2}$'),
  timezone        text not null,
  -- null: every sub-merchant of the month
  sub_merchant_id text,
  -- event-store position the figures were cut at ("commit/prepare")
  position        text not null,
  figures_sha256  text not null,
  statements      int not null,
  -- [{ "name": "...xlsx", "sha256": "...", "bytes": 1234, "subMerchantId": "..." }]
  files           jsonb not null,
  event_id        uuid,
  issued_at       timestamptz not null default now()
);
create index statement_runs_month on statement_runs (month, issued_at);

-- One row per job occurrence (job, scheduled time), whoever ran it: the unique key is what makes a
-- second worker see that a run already happened.
create table job_runs (
  job           text not null,
  scheduled_for timestamptz not null,
  trigger       text not null check (trigger in ('schedule', 'manual')),
  status        text not null check (status in ('running', 'succeeded', 'failed', 'skipped')),
  attempt       int not null default 1,
  worker        text not null,
  started_at    timestamptz not null default now(),
  finished_at   timestamptz,
  counters      jsonb not null default '{}'::jsonb,
  error         text,
  primary key (job, scheduled_for)
);
create index job_runs_latest on job_runs (job, started_at desc);
