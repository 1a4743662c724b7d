import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { heldAt } from '../../src/export/payouts/holds';
import { nightlyReportData } from '../../src/export/nightly/report';
import { holdReason } from '../../src/export/i18n/labels';
import { ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { retryQuarantined } from '../../src/projector/quarantine';
import { runProjections } from '../../src/projector/runner';
import { withTestPoison } from '../../src/projector/test-poison';
import { appendAll, at, POS, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { bank } from './support';

/**
 * Money of a payment whose event a projection set aside is in doubt (issue 23): it is held, whole, until
 * `recon quarantine retry` applies the event; then nothing is held for it.
 */

const fx = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-holds-quarantine-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const poisonFile = path.join(dir, 'poison.json');
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC' });
const observedAt = at('2024-03-11T00:00:00Z');
const dateTime = at('2024-03-10T10:00:00Z');
const part = { name: 'Alpha Shop', amount: 98_00n, fee: 2_00n, reserve: 10_00n };

function payment(paymentId: string) {
  return [
    registerRows({
      paymentId,
      method: 'purchase',
      dateTime,
      amount: 100_00n,
      receivers: [part],
      reportId: 'r',
      observedAt,
    }),
    periodRow({
      paymentId,
      method: 'purchase',
      dateTime,
      amount: 100_00n,
      merchantFee: 2_00n,
      reportId: 'r',
      observedAt,
    }),
  ];
}

async function project() {
  await waitVisible(fx.db.sql, fx.store);
  const projections = withTestPoison([journal, reconciliation], poisonFile);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({ ...deps(), graceHours: 48, bank, projections });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a payment with an event set aside', () => {
  it('is held whole until the event is applied again', async () => {
    writeFileSync(poisonFile, '{}');
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...payment('pay-clean'),
      ...payment('pay-poisoned'),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'r',
        announced: 2,
      }),
    ]);
    const events = await fx.store.readStream(`payment-${POS}-pay-poisoned`);
    const period = events.find((e) => e.type === 'PeriodRecordObserved');
    expect(period).toBeDefined();
    // the reconciliation cannot apply the poisoned payment's period record
    writeFileSync(poisonFile, JSON.stringify({ reconciliation: [period!.id] }));
    await project();

    const set = await fx.db.sql<{ event_id: string }[]>`select event_id::text from recon.quarantined_events`;
    expect(set.map((r) => r.event_id)).toEqual([period!.id]);
    const [net] = await fx.db.sql<{ net: string }[]>`
      select sum(net)::text as net from recon.journal_entries
      where payment_id = 'pay-poisoned' and receiver_name is not null`;
    const cut = (await ledgerPosition(fx.db.sql))!;
    // the reconciliation, not seeing the period record, finds it missing; a policy that holds nothing for
    // that leaves the quarantine alone to hold the payment
    const both = (await heldAt(fx.db.sql, fx.store, cut))!;
    expect(both.map((h) => [h.paymentId, h.amount])).toEqual([['pay-poisoned', BigInt(net!.net)]]);
    const policy = {
      ...DEFAULT_HOLD_POLICY,
      rules: { ...DEFAULT_HOLD_POLICY.rules, missing_in_period: 'none' as const },
    };
    const held = (await heldAt(fx.db.sql, fx.store, cut, { policy }))!;
    expect(held.map((h) => [h.paymentId, h.amount, h.type, h.discrepancyId])).toEqual([
      ['pay-poisoned', BigInt(net!.net), 'quarantined_event', `quarantine:${period!.id}`],
    ]);
    expect(held[0]!.reason).toBe('a record of the payment could not be processed: under investigation');
    expect(holdReason(held[0]!.reason, 'uk')).not.toBe(held[0]!.reason);
    expect(BigInt(net!.net)).toBeGreaterThan(0n);

    // the nightly report says so
    const report = await nightlyReportData(
      { sql: fx.db.sql, store: fx.store },
      { date: '2024-03-10', timezone: 'UTC', graceHours: 48 },
    );
    expect(report.facts.find(([label]) => label.startsWith('Events set aside'))?.[1]).toBe(1);
    expect(report.facts.find(([label]) => label === 'Set aside by reconciliation')?.[1]).toContain(period!.id);

    // fixed: applied again, nothing set aside, nothing held
    writeFileSync(poisonFile, '{}');
    const retried = await retryQuarantined({ ...deps(), graceHours: 48, bank, projections: [journal, reconciliation] });
    expect(retried.failed).toEqual([]);
    await project();
    const after = await ledgerPosition(fx.db.sql);
    expect(await heldAt(fx.db.sql, fx.store, after!, { policy })).toEqual([]);
    expect(await heldAt(fx.db.sql, fx.store, after!)).toEqual([]);
  });
});
