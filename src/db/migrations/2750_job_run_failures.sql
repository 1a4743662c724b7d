-- Every failed attempt of a job occurrence. job_runs keeps one row per occurrence, which its retry takes over
-- (status running, error cleared): the job_failed alert reads the attempts here, so that one retried before the
-- next evaluation is still told (docs/exceptions.md, "one alert per failed attempt").
create table job_run_failures (
  job           text not null,
  scheduled_for timestamptz not null,
  attempt       int not null,
  error         text,
  finished_at   timestamptz not null,
  primary key (job, scheduled_for, attempt)
);
create index job_run_failures_finished on job_run_failures (finished_at);
