-- The console's queue reads the core's `amount_in_doubt` column (src/reconciliation/discrepancies/amounts.ts,
-- stamped on every leg's discrepancy rows): the SQL copy of the amount rule of migration 2700 was a second
-- copy that could drift from the one in TypeScript, so it goes.
drop function if exists console_amount_in_doubt(text, jsonb);
drop function if exists console_leg_amount(text, jsonb);
drop function if exists console_fee_spread(jsonb);
drop function if exists console_fee_spread3(numeric, numeric, numeric);
drop function if exists console_split_sum(jsonb);
drop function if exists console_source_amount(jsonb);
drop function if exists console_larger(numeric, numeric);
drop function if exists console_minor(jsonb);
