-- Read-only role for auditors' own SQL: it may only SELECT the documented views of schema `recon`
-- (docs/discrepancies.md). NOLOGIN by default; an administrator grants it to a login role, or runs
--   alter role recon_auditor with login password '...';
-- Roles are cluster-wide: create it only when missing, and carry on (with a notice) when the migrating
-- user may not create roles.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'recon_auditor') then
    create role recon_auditor nologin noinherit nocreatedb nocreaterole;
  end if;
exception
  when insufficient_privilege then
    raise notice 'recon_auditor not created (no CREATEROLE privilege); create it by hand, see docs/discrepancies.md';
  -- another database of the same server created it at the same moment
  when unique_violation or duplicate_object then null;
end $$;

create schema if not exists recon;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'recon_auditor') then
    execute format('grant connect on database %I to recon_auditor', current_database());
    grant usage on schema recon to recon_auditor;
    grant select on all tables in schema recon to recon_auditor;
    -- views the projection runner publishes later in `recon` (by this same user) are readable too
    alter default privileges in schema recon grant select on tables to recon_auditor;
    -- and nothing else: no table of the public schema (event store, builds) is granted
    revoke all on all tables in schema public from recon_auditor;
  end if;
end $$;
