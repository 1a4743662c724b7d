import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discrepancyStream } from '../../src/events/audit-events';
import { exceptionStream } from '../../src/events/exception-events';
import { proposeDecision } from '../../src/exceptions/actions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { exceptionDeps, idOf, project, seedTwoLegs } from '../exceptions/support';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 5 (fixed: one appendMany of both streams, src/exceptions/context.ts `commit`): a decision was two appends, the exception's (`ExceptionDecisionProposed`, stream
 * exception-<id>) then the money's (`DiscrepancyAccepted`, stream discrepancy-<id>): src/exceptions/context.ts
 * `commit` appends the first, then runs `plan.after`. When another person's decision on the same discrepancy
 * lands between the plan and the commit (`recon discrepancies accept`, another worker, the console), the second
 * append is refused and the person is told CONFLICT, yet the first stays: the exception's history says "ivan:
 * withhold" while the decision in force on the money is olena's "pay". Who decided what disagrees with what the
 * statements and payout runs follow. (With the other decision already visible when planning, it is refused
 * cleanly: the window is the race.) A fix: one appendMany of both streams, or the money's append first.
 */

let db: TestDatabase;
let store: EventStore;
let orphan = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  await project(db.sql, store);
  orphan = await idOf(db.sql, 'payment_without_order');
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** The store, where another person's decision lands just before the exception's append (a real race). */
function racing(plain: EventStore, other: () => Promise<unknown>): EventStore {
  let raced = false;
  return new Proxy(plain, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'append' && prop !== 'appendMany') return typeof v === 'function' ? v.bind(target) : v;
      return async (first: unknown, ...rest: unknown[]) => {
        const streams = prop === 'append' ? [first] : (first as { stream: string }[]).map((r) => r.stream);
        if (!raced && streams.includes(exceptionStream(orphan))) {
          raced = true;
          await other();
        }
        return (v as (...a: unknown[]) => Promise<unknown>).call(target, first, ...rest);
      };
    },
  });
}

describe('review5: a decision refused on the money side', () => {
  it('leaves nothing on the exception either', async () => {
    const plain = exceptionDeps(db.sql, store);
    // olena decides pay through the discrepancies command at the same moment
    const olena = () =>
      acceptDiscrepancy(plain, {
        id: orphan,
        note: 'checked with the PSP',
        by: 'olena',
        at: new Date('2024-03-12T10:00:00Z'),
        decision: 'pay',
      });
    const deps = { ...plain, store: racing(store, olena) };
    const before = (await store.readStream(exceptionStream(orphan))).length;
    // ivan withholds the same money through the exceptions
    await expect(
      proposeDecision(
        deps,
        { id: 'ivan', name: 'ivan', role: 'analyst' },
        {
          id: orphan,
          decision: 'withhold',
          note: 'keep it',
        },
      ),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(
      (await store.readStream(discrepancyStream(orphan))).map((e) => (e.data as { decision?: string }).decision),
    ).toEqual(['pay']);
    // before the fix, ExceptionDecisionProposed (withhold, by ivan) was appended all the same
    const after = await store.readStream(exceptionStream(orphan));
    expect(after.slice(before).map((e) => e.type)).toEqual([]);
  });
});
