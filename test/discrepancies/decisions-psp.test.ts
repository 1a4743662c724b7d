import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { DiscrepancyAcceptanceRevoked, DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { newEvent } from '../../src/events/catalog';
import { heldAt } from '../../src/export/payouts/holds';
import { issueStatements, ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { rebuildProjection, runProjections } from '../../src/projector/runner';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { discrepancyId } from '../../src/reconciliation/discrepancy-rules';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import type { Position } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, POS, registerRows, subMerchant, syncCompleted, viewsDigest } from './fixtures';
import { inDoubtAsBigint } from '../support/in-doubt';

/**
 * Decisions on the PSP leg, end to end (reconciliation and journal projections, the statements' holds): an
 * acceptance appended at the revision read (never two in force), a write-off booked in the journal and
 * released from the holds, its revocation reopening the discrepancy (stamped by the leg's clock, its values
 * unfrozen: resolved at once if the sources agree by then), reversing the entry and holding the money again at
 * a later cut while an earlier cut holds what it held then; a revocation of an acceptance still waiting for
 * its discrepancy; and a replay from zero that gives the same rows.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-decisions-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  projections: [journal, reconciliation],
});

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const dateTime = at('2024-03-10T10:00:00Z');
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };
/** A sale of `amount` to Alpha Shop (fee 1.00) the register gives as a success and the period report as `status`. */
function sale(paymentId: string, amount: bigint, status: 'success' | 'failure', reportId: string, observedAt: string) {
  return [
    registerRows({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      receivers: [{ name: 'Alpha Shop', amount, fee: 1_00n }],
      reportId,
      observedAt,
    }),
    periodRow({ paymentId, dateTime, amount: amount + 1_00n, status, reportId, observedAt }),
  ];
}

interface Row {
  id: string;
  payment_id: string;
  status: string;
  accepted_by: string | null;
  accepted_by_event: string | null;
  updated_by_event: string;
  resolved_by_event: string | null;
  amount_in_doubt: bigint | null;
  values: Record<string, unknown>;
}
const rowOf = async (paymentId: string) =>
  inDoubtAsBigint((await fx.db.sql<Row[]>`select * from recon.discrepancies where payment_id = ${paymentId}`)[0]!);
const held = async (cut: Position) =>
  ((await heldAt(fx.db.sql, fx.store, cut)) ?? []).map((h) => [h.discrepancyId, h.amount] as const);
const writeOffLines = () =>
  fx.db.sql<{ entry_id: string; kind: string; reverses: string | null; account: string; amount: bigint }[]>`
    select e.entry_id, e.kind, e.reverses, l.account, l.amount
    from recon.journal_entries e join recon.journal_lines l on l.entry_id = e.entry_id
    where e.row_key like 'write_off:%' order by e.commit_pos, e.prepare_pos, l.line_no`;
const accept = (id: string, decision: 'pay' | 'withhold' | 'write_off', note = 'the PSP will not pay it') =>
  acceptDiscrepancy(
    { sql: fx.db.sql, store: fx.store },
    { id, note, by: 'Olena K.', at: new Date('2024-03-20T09:00:00Z'), decision },
  );
const revoke = (id: string) =>
  revokeDecision(fx.store, { id, reason: 'the PSP found it', by: 'Petro M.', at: new Date('2024-03-21T09:00:00Z') });

describe('decisions on the PSP leg', () => {
  const cuts: Record<string, Position> = {};
  let issued: Array<[string, string]> = [];
  const issue = (cut: Position) =>
    issueStatements(
      { sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC' },
      { month: '2024-03', outDir: out, atPosition: cut },
    );
  let id = '';
  let writeOff = '';

  it('a write-off is appended at the revision read, booked in the journal, and releases the hold', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sale('pay-1', 50_00n, 'failure', 'rep-1', at('2024-03-11T00:00:00Z')),
      ...sale('pay-2', 20_00n, 'failure', 'rep-1', at('2024-03-11T00:00:00Z')),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 2 }),
    ]);
    await settle();
    const open = await rowOf('pay-1');
    id = open.id;
    expect(open).toMatchObject({ status: 'open', amount_in_doubt: 51_00n });
    cuts.open = (await ledgerPosition(fx.db.sql))!;
    expect(await held(cuts.open)).toContainEqual([id, 50_00n]);

    const r = await accept(id, 'write_off');
    expect(r.ok).toBe(true);
    writeOff = r.ok ? r.eventId : '';
    const [event] = await fx.store.readStream(discrepancyStream(id));
    expect(event!.data).toMatchObject({
      decision: 'write_off',
      amount: '5100',
      currency: 'UAH',
      writeOff: { account: 'expense:write-offs', against: 'psp_clearing', gain: false, paymentId: 'pay-1' },
    });
    // a decision is in force on the stream: a second is refused, before and after the projection applies it
    expect(await accept(id, 'pay')).toMatchObject({ ok: false, code: 'ALREADY_ACCEPTED' });
    await settle();
    expect(await accept(id, 'pay')).toMatchObject({ ok: false, code: 'ALREADY_ACCEPTED' });
    expect(await rowOf('pay-1')).toMatchObject({ status: 'accepted', accepted_by_event: writeOff });

    // the journal: the amount in doubt frozen at the acceptance, to the write-off account against the receivable
    expect(await writeOffLines()).toEqual([
      { entry_id: `${writeOff}:w0`, kind: 'write_off', reverses: null, account: 'expense:write-offs', amount: 51_00n },
      { entry_id: `${writeOff}:w0`, kind: 'write_off', reverses: null, account: 'psp_clearing', amount: -51_00n },
    ]);
    // released at a cut after the write-off; the cut before still holds it
    cuts.writtenOff = (await ledgerPosition(fx.db.sql))!;
    expect((await held(cuts.writtenOff)).map(([d]) => d)).not.toContain(id);
    expect(await held(cuts.open)).toContainEqual([id, 50_00n]);
  });

  it('the statement issued after the write-off does not hold its money', async () => {
    const r = await issue(cuts.writtenOff!);
    issued = r.files.map((f) => [f.name, f.sha256]);
    expect(r.figures.some((f) => f.subMerchantId === 'SM-A')).toBe(true);
    const recorded = await fx.store.readStream('statements-2024-03');
    const payouts = (
      recorded.at(-1)!.data as { payouts: Array<{ subMerchantId: string; holds?: Array<[string, string]> }> }
    ).payouts;
    const holds = payouts.find((p) => p.subMerchantId === 'SM-A')?.holds ?? [];
    expect(holds.map(([d]) => d)).not.toContain(id);
    // pay-2's status mismatch is still open: held
    expect(holds.map(([d]) => d)).toContain((await rowOf('pay-2')).id);
  });

  it('a revocation reopens it by the leg clock, reverses the entry and holds again from a later cut', async () => {
    const r = await revoke(id);
    expect(r).toMatchObject({ ok: true, acceptance: writeOff, decision: 'write_off' });
    const revocation = r.ok ? r.eventId : '';
    await settle();
    const row = await rowOf('pay-1');
    expect(row).toMatchObject({
      status: 'open',
      accepted_by: null,
      accepted_by_event: null,
      updated_by_event: revocation,
    });
    const [stamped] = await fx.db.sql<{ updated_at: Date }[]>`
      select updated_at from recon.discrepancies where id = ${id}`;
    // the leg's clock: the latest time its events carry (the sync's completion), not the revocation's own time
    expect(stamped!.updated_at.toISOString()).toBe('2024-03-14T00:00:00.000Z');
    // reversed, never deleted: the entry and its reversal, dated as the original, net to nothing
    const lines = await writeOffLines();
    expect(lines.slice(2)).toEqual([
      {
        entry_id: `${revocation}:wr0`,
        kind: 'reversal',
        reverses: `${writeOff}:w0`,
        account: 'expense:write-offs',
        amount: -51_00n,
      },
      {
        entry_id: `${revocation}:wr0`,
        kind: 'reversal',
        reverses: `${writeOff}:w0`,
        account: 'psp_clearing',
        amount: 51_00n,
      },
    ]);
    const [sum] = await fx.db.sql<{ total: string }[]>`
      select sum(amount)::text as total from recon.journal_lines where account = 'expense:write-offs'`;
    expect(sum!.total).toBe('0');
    cuts.revoked = (await ledgerPosition(fx.db.sql))!;
    expect(await held(cuts.revoked)).toContainEqual([id, 50_00n]);
    // a statement cut where the write-off stood still holds what it held then: issued again, the same files
    expect((await held(cuts.writtenOff!)).map(([d]) => d)).not.toContain(id);
    const again = await issue(cuts.writtenOff!);
    expect(again.newEvent).toBe(false);
    expect(again.files.map((f) => [f.name, f.sha256])).toEqual(issued);
    // nothing in force any more: a second revocation is refused, a stale one appended anyway changes nothing
    expect(await revoke(id)).toMatchObject({ ok: false, code: 'NOT_IN_FORCE' });
    await fx.store.append(discrepancyStream(id), [
      newEvent(DiscrepancyAcceptanceRevoked, {
        discrepancyId: id,
        acceptance: writeOff,
        reason: 'twice',
        revokedBy: 'Petro M.',
        revokedAt: '2024-03-22T00:00:00.000Z',
      }),
    ]);
    await settle();
    expect(await rowOf('pay-1')).toEqual(row);
    expect(await writeOffLines()).toHaveLength(4);
  });

  it('a revoked discrepancy can be accepted again, at the next revision', async () => {
    const r = await accept(id, 'withhold', 'kept until the PSP answers');
    expect(r.ok).toBe(true);
    expect((await fx.store.readStream(discrepancyStream(id))).map((e) => e.revision)).toEqual([0, 1, 2, 3]);
    await settle();
    expect(await rowOf('pay-1')).toMatchObject({ status: 'accepted', accepted_by_event: r.ok ? r.eventId : '' });
    // withheld: still held, and nothing booked
    expect(await held((await ledgerPosition(fx.db.sql))!)).toContainEqual([id, 50_00n]);
    expect(await writeOffLines()).toHaveLength(4);
    // the very words of the first acceptance, after a revocation: a new event, not a repeat of the first
    expect((await revoke(id)).ok).toBe(true);
    const same = await accept(id, 'write_off');
    expect(same.ok && same.eventId !== writeOff).toBe(true);
    await settle();
    expect(await rowOf('pay-1')).toMatchObject({ status: 'accepted', accepted_by_event: same.ok ? same.eventId : '' });
    expect((await writeOffLines()).slice(4).map((l) => [l.kind, l.account, l.amount])).toEqual([
      ['write_off', 'expense:write-offs', 51_00n],
      ['write_off', 'psp_clearing', -51_00n],
    ]);
  });

  it('revoked, its values are no longer frozen: sources that agreed meanwhile resolve it at once', async () => {
    const two = await rowOf('pay-2');
    expect((await accept(two.id, 'pay')).ok).toBe(true);
    await settle();
    // the period report now gives pay-2 as a success: while accepted, nothing changes
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-2',
        dateTime,
        amount: 21_00n,
        status: 'success',
        reportId: 'rep-2',
        observedAt: at('2024-03-25T00:00:00Z'),
      }),
      syncCompleted({ ...day, completedAt: at('2024-03-25T00:00:00Z'), reportId: 'rep-2', announced: 2 }),
    ]);
    await settle();
    expect(await rowOf('pay-2')).toMatchObject({ status: 'accepted', values: two.values });
    const r = await revoke(two.id);
    await settle();
    expect(await rowOf('pay-2')).toMatchObject({
      status: 'resolved',
      accepted_by: null,
      resolved_by_event: r.ok ? r.eventId : '',
    });
  });

  it('an acceptance revoked before its discrepancy appears is dropped: the discrepancy opens', async () => {
    const key = `${POS}:pay-3:purchase:${dateTime}`;
    const future = discrepancyId('status_mismatch', key, null);
    const acceptance = newEvent(DiscrepancyAccepted, {
      discrepancyId: future,
      note: 'decided under other rules',
      acceptedBy: 'Olena K.',
      acceptedAt: '2024-03-26T00:00:00.000Z',
      decision: 'pay',
    });
    await fx.store.append(discrepancyStream(future), [acceptance], { expectedRevision: 'no_stream' });
    await settle();
    const [waiting] = await fx.db.sql<{ n: number }[]>`
      select count(*)::int as n from recon.discrepancies where id = ${future}`;
    expect(waiting!.n).toBe(0);
    expect(await revoke(future)).toMatchObject({ ok: true, acceptance: acceptance.id });
    await settle();
    await appendAll(fx.store, [
      ...sale('pay-3', 30_00n, 'failure', 'rep-3', at('2024-03-27T00:00:00Z')),
      syncCompleted({ ...day, completedAt: at('2024-03-30T00:00:00Z'), reportId: 'rep-3', announced: 1 }),
    ]);
    await settle();
    expect(await rowOf('pay-3')).toMatchObject({ id: future, status: 'open', accepted_by: null });
  });

  it('a replay from zero gives the same discrepancies and journal, whatever the batches', async () => {
    const digest = () => viewsDigest(fx.db.sql, ['discrepancies', 'journal_entries', 'journal_lines']);
    const live = await digest();
    for (const batchSize of [1, 1000]) {
      for (const name of ['reconciliation', 'journal']) await rebuildProjection(deps(), name, { batchSize });
      await settle();
      expect(await digest(), `batches of ${batchSize}`).toEqual(live);
    }
  });
});
