-- The alerts raised (src/alerts): an index of the `alert-<id>` streams, which hold the truth (the alert and
-- its deliveries, as events). The evaluation finds here which alerts exist and which still have a delivery
-- to make; a row lost (a crash between the append and the insert) is put back from the stream by the next
-- evaluation, which reads the stream before raising an alert it does not find here.
create table alerts (
  alert_id   uuid primary key,
  rule       text not null,
  kind       text not null,
  subject    text not null,
  title      text not null,
  raised_at  timestamptz not null,
  channels   text[] not null,
  -- a delivery is still to be made (or retried); false once every channel was sent or given up
  pending    boolean not null
);
create index alerts_pending on alerts (raised_at) where pending;
create index alerts_raised on alerts (raised_at desc);
