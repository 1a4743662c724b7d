-- The console's sessions (docs/console.md, "Sessions"). Only the SHA-256 of the session id is kept: a copy of
-- the table does not let anyone act as a user. The person is read again from the users on every request (a
-- revoked user's session stops working, and so does one whose token was rotated since.
create table console_sessions (
  id_sha256   text primary key,
  person_id   text not null,
  -- the SHA-256 of the token logged in with (as the users stream keeps it): a rotated token ends its sessions
  token_sha256 text not null,
  csrf        text not null,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null
);
create index console_sessions_expires_at on console_sessions (expires_at);

-- The money a discrepancy puts in doubt, in minor units, as src/reconciliation/discrepancy-summary.ts
-- `amountInDoubt` computes it, so that the console's queue filters by amount in PostgreSQL (a test compares
-- the two over every discrepancy of the demo). Amounts in `values` are decimal strings of minor units.
create function console_minor(v jsonb) returns numeric language sql immutable as $$
  select case when jsonb_typeof(v) = 'string' and (v #>> '{}') ~ '^-?\d+$' then (v #>> '{}')::numeric end
$$;

-- of two amounts, the one larger in size (the first on a tie; null only when both are)
create function console_larger(a numeric, b numeric) returns numeric language sql immutable as $$
  select case when b is null then a when a is null then b when abs(b) > abs(a) then b else a end
$$;

-- the largest amount any of the PSP's sources states (discrepancyAmount's first step); one expression, so that
-- PostgreSQL inlines it into the queue's query instead of calling it row by row
create function console_source_amount(v jsonb) returns numeric language sql immutable as $$
  select console_larger(console_larger(console_minor(v -> 'register' -> 'amount'),
    console_minor(v -> 'period' -> 'amount')), console_minor(v -> 'webhook' -> 'amount'))
$$;

-- the sum of a list of parts' amounts; null when the list is empty or one part is not an amount
create function console_split_sum(parts jsonb) returns numeric language sql immutable as $$
  select case
    when jsonb_typeof(parts) <> 'array' or jsonb_array_length(parts) = 0 then null
    when bool_and(console_minor(p -> 'amount') is not null) then sum(console_minor(p -> 'amount'))
  end
  from jsonb_array_elements(case when jsonb_typeof(parts) = 'array' then parts else '[]'::jsonb end) as p
$$;

create function console_leg_amount(type text, v jsonb) returns numeric language sql immutable as $$
  select case
    when type in ('settlement_missing', 'settlement_short', 'payout_missing', 'payout_amount_mismatch')
      then console_minor(v -> 'expected')
    when type = 'settlement_late' then console_minor(v -> 'received')
    when type in ('settlement_unexpected', 'payout_unexpected', 'payout_duplicate', 'payout_returned')
      then console_minor(v -> 'amount')
    when type in ('fee_above_contract', 'fee_below_contract') then console_minor(v -> 'part')
    when type = 'order_not_at_psp' then console_minor(v -> 'order_amount')
    when type in ('payment_without_order', 'amount_differs_from_order', 'split_differs_from_order')
      then coalesce(console_minor(v -> 'psp_amount'), console_split_sum(v -> 'psp_split'))
    when type = 'duplicate' then console_minor(v -> 'rows' -> 0 -> 'amount')
  end
$$;

-- the fee each source states: register and period `merchant_fee`, webhook `fee`; the spread when two or more
create function console_fee_spread3(a numeric, b numeric, c numeric) returns numeric language sql immutable as $$
  select case when (a is not null)::int + (b is not null)::int + (c is not null)::int > 1
    then greatest(a, b, c) - least(a, b, c) end
$$;

create function console_fee_spread(v jsonb) returns numeric language sql immutable as $$
  select console_fee_spread3(console_minor(v -> 'register' -> 'merchant_fee'),
    console_minor(v -> 'period' -> 'merchant_fee'), console_minor(v -> 'webhook' -> 'fee'))
$$;

create function console_amount_in_doubt(type text, v jsonb) returns numeric language sql immutable as $$
  select abs(case
    when type = 'fee_mismatch' then console_fee_spread(v)
    when type = 'split_mismatch'
      then coalesce(console_source_amount(v), console_leg_amount(type, v), console_minor(v -> 'original_amount'))
    when type = 'report_count_mismatch' then null
    when type = 'payout_missing' then console_minor(v -> 'expected') - coalesce(console_minor(v -> 'paid_out'), 0)
    when type = 'payout_amount_mismatch' then console_minor(v -> 'paid_out') - console_minor(v -> 'expected')
    when type in ('payout_unexpected', 'payout_duplicate', 'payout_returned', 'settlement_unexpected')
      then console_minor(v -> 'amount')
    when type = 'settlement_missing' then console_minor(v -> 'expected')
    when type = 'settlement_short' then console_minor(v -> 'shortfall')
    when type = 'settlement_late' then console_minor(v -> 'received')
    when type = 'order_not_at_psp' then console_minor(v -> 'order_amount')
    when type in ('payment_without_order', 'amount_differs_from_order') then console_minor(v -> 'psp_amount')
    when type = 'split_differs_from_order' then console_split_sum(v -> 'psp_split')
    when type in ('fee_above_contract', 'fee_below_contract') then console_minor(v -> 'difference')
    else coalesce(console_source_amount(v), console_leg_amount(type, v))
  end)
$$;
