-- recon serialises its own work on advisory locks (projection runner, healing index, migrations, jobs).
-- PostgreSQL lets PUBLIC call the functions that take them, so the read-only auditor role (0250) could
-- take `pg_advisory_lock(7315, hashtext('reconciliation'))` and keep it for its session: every catch-up,
-- `recon discrepancies` included, would wait forever (found in review). Function privileges are per
-- database: in this database only recon's own role (the one that migrates) may take advisory locks.
-- Superusers are not affected. A migrating user that does not own the functions (a managed server without
-- a superuser) cannot change them: a notice says so, and docs/discrepancies.md says what to do instead.
do $$
declare
  f regprocedure;
begin
  for f in
    select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'pg_catalog' and p.proname like 'pg\_%advisory\_%lock%' and p.proname not like '%unlock%'
  loop
    execute format('revoke execute on function %s from public', f);
    execute format('grant execute on function %s to %I', f, current_user);
  end loop;
exception
  when insufficient_privilege then
    raise notice 'advisory lock functions left callable by PUBLIC (the migrating user does not own them); see docs/discrepancies.md, "read-only SQL role"';
end $$;
