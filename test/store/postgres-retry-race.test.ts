import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/store/prepare';
import type { ExpectedRevision, NewEvent } from '../../src/store/types';
import { useTestStore } from '../support/db';

/**
 * A retry of an append with an expected revision that arrives while the original is still committing waits
 * for the stream's row lock; the statement that waited read the stored ids with its snapshot from before
 * the wait, so it saw the revision the original left but not the original's events, and refused the retry
 * with WRONG_EXPECTED_REVISION. docs/store.md: "every retry is safe".
 */
const t = useTestStore();
const event = (n: number): NewEvent => ({ id: randomUUID(), type: 'RaceEvent', version: 1, data: { n } });

/** Until a statement of another session naming `marker` waits for a lock. */
async function waitUntilBlocked(marker: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const rows = await t.db.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${marker}%`}`;
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the retry never waited for the stream lock');
}

/**
 * The original append, in flight: its transaction holds the stream's row at `revision` and has written
 * `events` after `before` stored ones, not yet committed. Runs `retry` until it waits for the lock, then
 * commits the original and returns what the retry came to.
 */
async function racingTheOriginal(
  stream: string,
  before: number,
  events: readonly NewEvent[],
  retry: () => Promise<unknown>,
) {
  const original = await t.db.sql.reserve();
  try {
    await original`begin`;
    const revision = before + events.length - 1;
    if (before === 0) await original`insert into es_streams (stream_id, revision) values (${stream}, ${revision})`;
    else await original`update es_streams set revision = ${revision} where stream_id = ${stream}`;
    // one statement, as the store writes them (the commit-order guard of migration 0600 runs per statement)
    const rows = events.map((e, i) => ({
      id: e.id,
      rev: before + i,
      type: e.type,
      data: e.data,
      hash: contentHash(e),
    }));
    await original`insert into es_events (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
      select id, ${stream}, rev, type, 1, data, '{}'::json, hash
      from json_to_recordset(${JSON.stringify(rows)}::text::json) as r(id uuid, rev int8, type text, data json, hash text)`;
    const outcome = retry().then(
      (ok) => ({ ok }),
      (err: unknown) => ({ err: err as Error & { code?: string } }),
    );
    await waitUntilBlocked('es_streams');
    await original`commit`;
    return await outcome;
  } catch (e) {
    await original`rollback`;
    throw e;
  } finally {
    original.release();
  }
}

describe('postgres event store: a retry racing its original append', () => {
  it.each<[string, number, ExpectedRevision]>([
    ['no_stream', 0, 'no_stream'],
    ['a revision', 1, 0],
    ['stream_exists', 1, 'stream_exists'],
  ])('is a duplicate, not WRONG_EXPECTED_REVISION, with the expectation %s', async (_, before, expectedRevision) => {
    const stream = `race-${randomUUID()}`;
    if (before) await t.store.append(stream, [event(0)]);
    const e = [event(1), event(2)];
    const outcome = await racingTheOriginal(stream, before, e, () => t.store.append(stream, e, { expectedRevision }));
    expect('err' in outcome ? `${outcome.err.name}: ${outcome.err.message}` : 'ok').toBe('ok');
    expect((outcome as { ok: unknown }).ok).toMatchObject({ appended: 0, duplicates: 2, revision: before + 1 });
    expect((await t.store.readStream(stream)).slice(before).map((x) => x.id)).toEqual(e.map((x) => x.id));
  });

  it('still refuses a retry that brings an event the original did not write, and writes nothing of it', async () => {
    const stream = `race-${randomUUID()}`;
    const e = event(1);
    const extra = event(2);
    const outcome = await racingTheOriginal(stream, 0, [e], () =>
      t.store.append(stream, [e, extra], { expectedRevision: 'no_stream' }),
    );
    expect('err' in outcome && outcome.err).toMatchObject({
      code: 'WRONG_EXPECTED_REVISION',
      expected: 'no_stream',
      actual: 0,
    });
    expect((await t.store.readStream(stream)).map((x) => x.id)).toEqual([e.id]);
  });

  it('in a multi-stream call, a stream that raced is a duplicate beside one that is written', async () => {
    const raced = `race-${randomUUID()}`;
    const other = `race-${randomUUID()}`;
    const e = event(1);
    const o = event(2);
    const outcome = await racingTheOriginal(raced, 0, [e], () =>
      t.store.appendMany([
        { stream: raced, events: [e], expectedRevision: 'no_stream' },
        { stream: other, events: [o], expectedRevision: 'no_stream' },
      ]),
    );
    expect('err' in outcome ? outcome.err.message : 'ok').toBe('ok');
    expect((outcome as { ok: unknown }).ok).toMatchObject([
      { stream: raced, appended: 0, duplicates: 1, revision: 0 },
      { stream: other, appended: 1, duplicates: 0, revision: 0 },
    ]);
    expect((await t.store.readStream(other)).map((x) => x.id)).toEqual([o.id]);
  });
});
