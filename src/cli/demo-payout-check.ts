import type { BankConfig } from '../config/bank';
import { type HoldPolicy, holdPolicyFromEnv } from '../config/hold-policy';
import type { Sql } from '../db/connect';
import { dataOf } from '../events/catalog';
import { StatementIssued, statementStream } from '../events/statement-events';
import { formatMinor } from '../ingest/bank/amount';
import { parseFeeContract } from '../ingest/fee-contract';
import { applicableLine, expectedFee } from '../order-terms';
import { bankWorld } from '../sandbox/bank';
import { type OrderBreak, payoutTruth } from '../sandbox/ground-truth';
import { pspSideOrderTruth, sandboxIntentOf } from '../sandbox/intent';
import type { Operation } from '../sandbox/model';
import type { Scenario } from '../sandbox/scenario';
import type { EventStore } from '../store/types';
import { DEMO_ACCOUNTS, expectedPayouts, paidOutLines } from './demo-bank';

/**
 * The demo's check of the money (issue 25): per currency, what its statements hold and ask to pay, and what
 * recon found paid in the bank, against the sandbox's ground truth: the holds and amounts due the injected
 * breaks give under the hold policy (src/sandbox/ground-truth.ts, computed without recon's journal) and what
 * the sandbox bank paid out (its own statements' payouts account). One line per figure and currency; a
 * difference says "NOT the injected" so the demo's callers (and the before-stop hook) see it.
 */

export interface PayoutFigure {
  readonly currency: string;
  readonly held: bigint;
  readonly due: bigint;
  readonly paid: bigint;
}

export interface PayoutCheck {
  readonly found: readonly PayoutFigure[];
  readonly expected: readonly PayoutFigure[];
  readonly ok: boolean;
}

/** The order breaks of the sandbox's intent, each fee's difference as the contract states it. */
function orderBreaks(scenario: Scenario): OrderBreak[] {
  const intent = sandboxIntentOf(scenario);
  const contract = parseFeeContract(intent.feeContractCsv(), 'fee-contract.csv');
  if (!contract.ok) throw new Error('the sandbox fee contract is invalid');
  const breaks = [...intent.groundTruth, ...pspSideOrderTruth(scenario, intent)];
  // a fee break's payment in its order, its last operation (a payment's operations share its id): found by
  // the order's id, with no pass over the month
  const lastOperation = (orderId: string, paymentId: string | null): Operation | undefined =>
    scenario
      .findOrder(orderId)
      ?.operations.filter((op) => op.paymentId === paymentId)
      .at(-1);
  const feeGap = (orderId: string, paymentId: string | null, subMerchantId: string | null): bigint | undefined => {
    const op = lastOperation(orderId, paymentId);
    const part = op?.receivers.find((r) => r.subMerchantId === subMerchantId);
    if (!op || !part) return undefined;
    // the register's part: 1.00 more when its split was distorted (split_mismatch)
    const d = op.distortion;
    const index = op.receivers.indexOf(part);
    const share = d?.kind === 'receiver_amount' && d.receiverIndex === index ? d.value + part.fee : part.share;
    const day = new Date(op.at).toISOString().slice(0, 10);
    const line = applicableLine(contract.lines, subMerchantId, op.method, op.currency, day);
    if (!line) return undefined;
    const gap = part.fee - expectedFee(line, share);
    return gap < 0n ? -gap : gap;
  };
  return breaks.map((t) => {
    const difference = t.type.startsWith('fee_') ? feeGap(t.orderId, t.paymentId, t.subMerchantId) : undefined;
    return { ...t, ...(difference !== undefined ? { difference } : {}) };
  });
}

/** What the sandbox bank paid on the expected payouts per currency: each once, less what came back. */
function bankPaid(scenario: Scenario, bank: BankConfig, payouts: Awaited<ReturnType<typeof expectedPayouts>>) {
  const world = bankWorld(scenario, {
    accounts: DEMO_ACCOUNTS,
    lagBusinessDays: bank.settlement.lagBusinessDays,
    holidays: bank.settlement.holidays,
    payouts,
  });
  const payoutsAccounts = new Set(Object.values(DEMO_ACCOUNTS).map((a) => a.payouts));
  // a payout paid twice is paid once and a payout_duplicate to recover (checked with the money discrepancies)
  const twice = new Set(world.truth.flatMap((t) => (t.type === 'payout_duplicate' ? [t.bankRef] : [])));
  const out = new Map<string, bigint>();
  for (const st of world.statements) {
    if (!payoutsAccounts.has(st.account)) continue;
    for (const e of st.entries) {
      if (!e.endToEndId?.startsWith('PO-') || twice.has(e.bankRef)) continue;
      // a charge the bank folded into a debit was not paid to the payee
      const paid = e.amount - (e.foldedCharge ?? 0n);
      out.set(st.currency, (out.get(st.currency) ?? 0n) + (e.direction === 'debit' ? paid : -paid));
    }
  }
  return out;
}

/** The month's statements as issued (the last run): held and amount due per currency. */
async function issuedFigures(store: EventStore, month: string) {
  const runs = (await store.readStream(statementStream(month))).filter((e) => e.type === StatementIssued.type);
  const last = runs[runs.length - 1];
  const out = new Map<string, { held: bigint; due: bigint }>();
  for (const p of last ? (dataOf(StatementIssued, last).payouts ?? []) : []) {
    const t = out.get(p.currency) ?? { held: 0n, due: 0n };
    out.set(p.currency, { held: t.held + BigInt(p.held), due: t.due + BigInt(p.amountDue) });
  }
  return out;
}

export async function checkDemoPayouts(
  deps: { sql: Sql; store: EventStore; bank: BankConfig; scenario: Scenario; policy?: HoldPolicy },
  month: string,
): Promise<PayoutCheck> {
  const policy = deps.policy ?? holdPolicyFromEnv();
  const issued = await issuedFigures(deps.store, month);
  const paidByRecon = new Map<string, bigint>();
  for (const l of await paidOutLines(deps.sql))
    paidByRecon.set(l.currency, (paidByRecon.get(l.currency) ?? 0n) + BigInt(l.paid_out));
  const truth = payoutTruth(
    { ...deps.scenario, orders: () => deps.scenario.orders() },
    orderBreaks(deps.scenario),
    policy,
  );
  const paidByBank = bankPaid(deps.scenario, deps.bank, await expectedPayouts(deps.sql));
  const currencies = [...new Set([...issued.keys(), ...truth.map((t) => t.currency)])].sort();
  const found = currencies.map((currency) => ({
    currency,
    held: issued.get(currency)?.held ?? 0n,
    due: issued.get(currency)?.due ?? 0n,
    paid: paidByRecon.get(currency) ?? 0n,
  }));
  const expected = currencies.map((currency) => {
    const t = truth.find((x) => x.currency === currency);
    return { currency, held: t?.held ?? 0n, due: t?.due ?? 0n, paid: paidByBank.get(currency) ?? 0n };
  });
  const ok = found.every((f, i) => {
    const e = expected[i]!;
    return f.held === e.held && f.due === e.due && f.paid === e.paid;
  });
  return { found, expected, ok };
}

/** The check as the demo prints it: one line per currency, found (ground truth), then the verdict. */
export function payoutCheckLines(c: PayoutCheck): string[] {
  const cell = (a: bigint, b: bigint) => `${formatMinor(a).padStart(12)}${a === b ? '' : ` (${formatMinor(b)})`}`;
  const lines = c.found.map((f, i) => {
    const e = c.expected[i]!;
    return `    ${f.currency}  held ${cell(f.held, e.held)}  due ${cell(f.due, e.due)}  paid ${cell(f.paid, e.paid)}`;
  });
  const wrong = c.found.flatMap((f, i) => {
    const e = c.expected[i]!;
    return (['held', 'due', 'paid'] as const)
      .filter((k) => f[k] !== e[k])
      .map((k) => `${k} ${f.currency} ${formatMinor(f[k])} (expected ${formatMinor(e[k])})`);
  });
  return [
    ...lines,
    c.ok
      ? '    held, due and paid per currency: exactly the injected breaks’ under the hold policy'
      : `    NOT the injected holds and payouts: ${wrong.join('; ')}`,
  ];
}

/** The demo's one call: the check, printed. */
export async function printPayoutCheck(
  deps: Parameters<typeof checkDemoPayouts>[0],
  month: string,
  print: (line: string) => void,
): Promise<PayoutCheck> {
  const c = await checkDemoPayouts(deps, month);
  print('money per currency: found (sandbox ground truth when it differs)');
  for (const l of payoutCheckLines(c)) print(l);
  return c;
}
