-- The settings a projection build applies events with: the business time zone (days and months) and the
-- grace period (when an operation may be judged). Recorded when the build is created and kept for its
-- whole life, so that a build never mixes two time zones or two grace periods; when RECON_TIMEZONE or
-- RECON_GRACE_HOURS change, the runner starts a new build beside the live one (as for a new version),
-- which replaces it once caught up (docs/ledger.md). Builds made before this migration have none: they
-- are given the settings of the first run after it (the ones they were most likely built with).
alter table projection_builds add column timezone text, add column grace_hours int;
