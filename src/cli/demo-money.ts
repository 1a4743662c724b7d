import path from 'node:path';
import type { Config } from '../config/env';
import { cutDay, payoutStatusesAt } from '../export/payouts/paid-out';
import { payoutStatusFileName, writePayoutStatusWorkbook } from '../export/payouts/workbook';
import { formatMinor } from '../ingest/bank/amount';
import type { Logger } from '../log';
import { runProjections } from '../projector/runner';
import { formatPosition } from '../store/types';
import { bankLoop, bookedCharges, paidOutLines, statusTruth } from './demo-bank';
import { compareFindings, countByType, type DemoCheck, standingDiscrepancies } from './demo-check';
import { type DemoOptions, type DemoSummary, isMoneyType } from './demo-types';
import { type openRuntime, runnerDepsOf } from './runtime';

type Runtime = Awaited<ReturnType<typeof openRuntime>>;
type Money = DemoSummary['money'];
type Loop = Awaited<ReturnType<typeof bankLoop>>;

/** After the statements: the bank pays, its statements are imported, recon matches (src/cli/demo-bank.ts). */
export async function moneyLoop(
  rt: Runtime,
  config: Config,
  log: Logger,
  scenario: Parameters<typeof bankLoop>[0]['scenario'],
  opts: DemoOptions,
  step: (text: string) => void,
): Promise<Money & { check: DemoCheck }> {
  const deps = runnerDepsOf(rt, log);
  // the payouts read model learns the expected payouts the statements recorded
  await runProjections(deps, { signal: opts.signal });
  const loop = await bankLoop({
    sql: rt.sql,
    store: rt.store,
    bank: config.bank,
    scenario,
    outDir: opts.outDir,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  step(
    `sandbox bank: ${loop.expectedPayouts} payouts asked for by the statements, paid by the bank with the faults it injects (missed, returned, paid twice); ${loop.files.camt053} camt.053 and ${loop.files.mt940} MT940 statements in ${path.relative(process.cwd(), loop.files.dir)}`,
  );
  step(`bank import refused the statement that does not foot: ${loop.refused}`);
  step(
    `bank import: ${loop.imported.statements} statements, ${loop.imported.entries} new entries (${loop.imported.known} already known)`,
  );
  await runProjections(deps, { signal: opts.signal });
  const findings = await moneyFindings(rt, config, loop);
  const paidOut = await paidOutList(rt);
  step(
    `money: ${paidOut.filter((p) => p.status === 'paid').length} of ${paidOut.length} payouts paid; discrepancies ${JSON.stringify(findings.discrepancies)}`,
  );
  const payoutStatuses = await payoutStatusReport(rt, config, opts.outDir, opts.month!, loop);
  step(
    `payout status (what the bank did, ${path.relative(process.cwd(), payoutStatuses.file)}): ${JSON.stringify(payoutStatuses.found)}; the bank's ground truth ${JSON.stringify(payoutStatuses.truth)}`,
  );
  const charges = await chargesBooked(rt, loop);
  step(
    `bank charges booked as bank fees: ${charges.booked} of the ${charges.taken} the bank took (${Object.entries(
      charges.bookedByCurrency,
    )
      .map(([c, v]) => `${formatMinor(BigInt(v))} ${c}`)
      .join(', ')})`,
  );
  return {
    files: loop.files,
    imported: loop.imported,
    refused: loop.refused,
    discrepancies: findings.discrepancies,
    groundTruth: findings.groundTruth,
    paidOut,
    payoutStatuses,
    charges,
    check: findings.check,
  };
}

/** The money discrepancies recon found open, beside those the sandbox bank injected. */
async function moneyFindings(rt: Runtime, config: Config, loop: Loop) {
  // keyed as the bank's ground truth is: a payout by its reference, a settlement by the day(s) it was due
  const moneyFound = (await standingDiscrepancies(rt.sql, config.timezone))
    .filter((d) => isMoneyType(d.type))
    .map((d) => `${d.type} ${String(d.values['reference'] ?? [d.values['due_on']].flat().join(','))}`);
  const moneyExpected = loop.truth.flatMap((t) =>
    'reference' in t ? [`${t.type} ${t.reference}`] : 'dueOn' in t ? [`${t.type} ${t.dueOn}`] : [],
  );
  return {
    discrepancies: countByType(moneyFound),
    groundTruth: countByType(moneyExpected),
    check: compareFindings('bank (type, payout reference or settlement day)', moneyFound, moneyExpected),
  };
}

async function paidOutList(rt: Runtime): Promise<Money['paidOut']> {
  return (await paidOutLines(rt.sql)).map((r) => ({
    reference: r.reference,
    payee: r.payee_name,
    currency: r.currency,
    amount: r.amount,
    paidOut: r.paid_out,
    status: r.status,
    paidOn: r.paid_on,
  }));
}

/** The bank's charges booked as bank fees, beside those the bank took. */
async function chargesBooked(rt: Runtime, loop: Loop): Promise<Money['charges']> {
  const booked = await bookedCharges(rt.sql);
  const takenByCurrency: Record<string, string> = {};
  // a charge folded into a payout's debit is one the bank took too
  const taken = [...loop.charges, ...loop.foldedCharges];
  for (const c of taken)
    takenByCurrency[c.currency] = (BigInt(takenByCurrency[c.currency] ?? '0') + c.amount).toString();
  return {
    booked: booked.count,
    bookedByCurrency: booked.byCurrency,
    taken: taken.length,
    takenByCurrency: Object.fromEntries(Object.entries(takenByCurrency).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/**
 * The month's payout status workbook, written after the bank paid (the statements were issued before it): every
 * expected payout with what the bank did, read as a statement reads it, and the bank world's ground truth.
 */
async function payoutStatusReport(
  rt: Runtime,
  config: Config,
  outDir: string,
  month: string,
  loop: Loop,
): Promise<Money['payoutStatuses']> {
  const head = await rt.store.headPosition();
  const day = head ? await cutDay(rt.store, head, config.timezone) : null;
  const all = head ? ((await payoutStatusesAt(rt.sql, head, config.bank.payouts, day)) ?? []) : [];
  const lines = all.filter((l) => l.month === month);
  const file = path.join(outDir, payoutStatusFileName(month));
  await writePayoutStatusWorkbook(file, lines, {
    month,
    position: head ? formatPosition(head) : '',
    writtenAt: new Date(),
  });
  const truth = statusTruth(
    lines.map((l) => l.reference),
    loop.truth,
  );
  return {
    found: countByType(lines.map((l) => l.status)),
    truth: countByType(Object.values(truth)),
    file,
  };
}
