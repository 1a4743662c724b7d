-- The bank settings a projection build applies events with (RECON_CONFIG's bank object: accounts and their
-- roles, settlement lag, holidays, tolerances, payout rules), as canonical JSON. Like the time zone
-- (migration 0700), recorded when the build is created and kept for its whole life: a projection that reads
-- them (the journal, the settlement read model) gets a new build beside the live one when they change.
-- Builds made before this migration are given the settings of the first run after it.
alter table projection_builds add column bank_settings text;
