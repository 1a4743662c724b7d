/**
 * A month of the cash leg arriving in small appends, for the settlement benchmark of docs/scale.md: each
 * payment's register row its own append (as webhooks and small sync windows bring them), each credit of a
 * `settlement` account its own append, a statement per currency each Friday. The demo's four currencies and
 * accounts (src/cli/demo-bank.ts); the PSP pays each settlement day on time, less a bank charge now and then,
 * and misses one in seven.
 *
 *   node --import tsx scripts/settlement-month.ts --config FILE [--per-day 25] [--month 2025-03]
 *
 * Appends to the store of the environment (RECON_DATA_DIR or DATABASE_URL) and writes FILE, the project file
 * (RECON_CONFIG) with the demo's bank: `recon project --rebuild settlement` then judges the month.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DateTime } from 'luxon';
import { DEMO_ACCOUNTS } from '../src/cli/demo-bank';
import { withRuntime } from '../src/cli/runtime';
import { settlementCredit, statementImported } from '../fixtures/bank-events';
import { newEvent } from '../src/events/catalog';
import { RegisterRecordObserved, paymentStream } from '../src/events/ingest-events';
import { dueDays } from '../src/reconciliation/settlement/expected';
import type { AppendRequest } from '../src/store/types';

const { values: args } = parseArgs({
  options: {
    config: { type: 'string' },
    'per-day': { type: 'string', default: '25' },
    month: { type: 'string', default: '2025-03' },
  },
});
if (!args.config) {
  process.stderr.write('usage: scripts/settlement-month.ts --config FILE [--per-day 25] [--month YYYY-MM]\n');
  process.exit(2);
}

const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const CURRENCIES = Object.keys(DEMO_ACCOUNTS);
const TOLERANCE: Record<string, string> = { EUR: '50', UAH: '200', USD: '50', XTS: '50' };

/** The demo's bank (src/cli/demo-bank.ts demoBankConfig) as a project file. */
function writeProjectFile(file: string): void {
  const accounts = CURRENCIES.flatMap((c) => [
    { id: DEMO_ACCOUNTS[c]!.settlement, currency: c, role: 'settlement', name: `Demo settlements ${c}` },
    { id: DEMO_ACCOUNTS[c]!.payouts, currency: c, role: 'payouts', name: `Demo payouts ${c}` },
  ]);
  const settlement = { lagBusinessDays: 1, holidays: [], tolerance: TOLERANCE, lateBusinessDays: 3 };
  writeFileSync(file, JSON.stringify({ bank: { accounts, settlement, payouts: { dueDays: 3, matchWindowDays: 10 } } }));
}

function saleOf(id: string, currency: string, day: string, amount: bigint, fee: bigint): AppendRequest {
  const dateTime = `${day}T12:00:00.000Z`;
  const record = {
    projectId: POS,
    orderId: `order-${id}`,
    paymentId: id,
    method: 'purchase' as const,
    status: 'success' as const,
    dateTime,
    currency,
    amount: amount.toString(),
    originalAmount: amount.toString(),
    customerFee: '0',
    merchantFee: fee.toString(),
    receiverName: 'Shop One',
    receiverAmount: (amount - fee).toString(),
    receiverFee: fee.toString(),
    reserveAmount: '0',
    cardMask: '444455******1111',
    payway: 'card',
    other: {},
  };
  const window = { from: `${day}T00:00:00.000Z`, to: DateTime.fromISO(day, { zone: 'utc' }).plus({ days: 1 }).toISO() };
  const metadata = { reportId: `report-${day}`, window, observedAt: `${day}T23:00:00.000Z`, source: 'register' };
  const e = newEvent(RegisterRecordObserved, { posId: POS, raw: JSON.stringify(record), record }, { metadata });
  return { stream: paymentStream(POS, id), events: [e] };
}

function creditOf(currency: string, day: string, amount: bigint): AppendRequest {
  const accountId = DEMO_ACCOUNTS[currency]!.settlement;
  const bankRef = `${currency}-${day}`;
  return settlementCredit({ accountId, currency, bankRef, day, amount, statementId: `stmt-${currency}-${day}` });
}

function statementOf(currency: string, from: string, to: string): AppendRequest {
  const accountId = DEMO_ACCOUNTS[currency]!.settlement;
  return statementImported({ accountId, currency, statementId: `S-${currency}-${to}`, from, to });
}

/** The month's appends in the order they arrive: each day's payments, then the credits booked that day. */
function monthOf(month: string, perDay: number): AppendRequest[] {
  const first = DateTime.fromISO(`${month}-01`, { zone: 'utc' });
  const days = Array.from({ length: first.daysInMonth! }, (_, i) => first.plus({ days: i }).toISODate()!);
  const out: AppendRequest[] = [];
  const activity = new Map(
    CURRENCIES.map((c) => [c, [] as { currency: string; day: string; clearing: bigint; fees: bigint }[]]),
  );
  const cal = { lagBusinessDays: 1, holidays: new Set<string>() };
  let n = 0;
  for (const [k, day] of days.entries()) {
    for (const c of CURRENCIES) {
      let clearing = 0n;
      let fees = 0n;
      for (let i = 0; i < perDay; i++) {
        const amount = BigInt(1_000 + ((n * 7919) % 50_000));
        const fee = amount / 50n;
        out.push(saleOf(`${c}-${day}-${i}`, c, day, amount, fee));
        clearing += amount;
        fees += fee;
        n++;
      }
      activity.get(c)!.push({ currency: c, day, clearing, fees });
      // what falls due today: paid on time, a bank charge of 3 on one in three, nothing on one in seven
      for (const d of dueDays(activity.get(c)!, cal).filter((x) => x.day === day)) {
        if ((k + c.length) % 7 === 0) continue;
        out.push(creditOf(c, day, d.amount - (k % 3 === 0 ? 3n : 0n)));
      }
      if (DateTime.fromISO(day).weekday === 5) out.push(statementOf(c, days[Math.max(0, k - 6)]!, day));
    }
  }
  return out;
}

await withRuntime(async (rt) => {
  writeProjectFile(args.config!);
  const appends = monthOf(args.month!, Number(args['per-day']));
  for (const a of appends) await rt.store.appendMany([a]);
  process.stdout.write(`${appends.length} appends written\n`);
});
