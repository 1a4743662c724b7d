import path from 'node:path';
import type { Command } from 'commander';
import { formatMinor } from '../../ingest/bank/amount';
import { cutDay, type PayoutStatusLine, payoutStatusesAt } from '../../export/payouts/paid-out';
import { payoutStatusFileName, writePayoutStatusWorkbook } from '../../export/payouts/workbook';
import { printable } from '../../input-rules';
import { runProjections } from '../../projector/runner';
import { formatPosition } from '../../store/types';
import { UsageError } from '../errors';
import { outDirOption } from '../options';
import { withRuntime, runnerDepsOf } from '../runtime';

/**
 * `recon payouts --month M`: what the bank did with each payout the month's statements asked for (docs/bank.md,
 * "What the bank did, where finance looks"), as the bank statements imported so far show it: status, paid, paid
 * on, bank reference, account paid to. `--out DIR` also writes payout-status-M.xlsx.
 */
export function register(program: Command): void {
  program
    .command('payouts')
    .description(
      "each payout a month's statements asked for, and what the bank did with it (status, paid, when, to which account)",
    )
    .requiredOption('--month <YYYY-MM>', 'the statement month whose payouts to show')
    .option('--format <format>', 'table or json', 'table')
    .option('--out <dir>', 'also write payout-status-YYYY-MM.xlsx into this directory', (v) => outDirOption('--out', v))
    .option('--no-catch-up', 'read the views as they are, without applying new events first')
    .action(async (opts: { month: string; format: string; out?: string; catchUp: boolean }) => {
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month))
        throw new UsageError(
          `--month: expected YYYY-MM, got ${JSON.stringify(printable(opts.month, { oneLine: true }))}`,
        );
      if (!['table', 'json'].includes(opts.format))
        throw new UsageError(
          `--format must be table or json (got ${JSON.stringify(printable(opts.format, { oneLine: true }))})`,
        );
      await withRuntime(async (rt, signal) => {
        const deps = runnerDepsOf(rt);
        if (opts.catchUp) await runProjections(deps, { signal });
        const head = await rt.store.headPosition();
        const day = head ? await cutDay(rt.store, head, rt.config.timezone) : null;
        const all = head ? await payoutStatusesAt(rt.sql, head, rt.config.bank.payouts, day) : [];
        const lines = (all ?? []).filter((l) => l.month === opts.month);
        if (opts.out) {
          const file = path.join(opts.out, payoutStatusFileName(opts.month));
          await writePayoutStatusWorkbook(file, lines, {
            month: opts.month,
            position: head ? formatPosition(head) : '',
            writtenAt: new Date(),
          });
          process.stderr.write(`wrote ${printable(file, { oneLine: true })}\n`);
        }
        if (opts.format === 'json') process.stdout.write(`${JSON.stringify(lines.map(asJson), null, 2)}\n`);
        else process.stdout.write(table(lines));
      });
    });
}

const asJson = (l: PayoutStatusLine) => ({
  reference: l.reference,
  subMerchantId: l.subMerchantId,
  payee: l.payeeName,
  currency: l.currency,
  month: l.month,
  amount: l.amount.toString(),
  status: l.status,
  paidOut: l.paidOut.toString(),
  returned: l.returned.toString(),
  duplicated: l.duplicated.toString(),
  dueOn: l.dueOn,
  paidOn: l.paidOn,
  bankRef: l.bankRef,
  paidTo: l.paidTo,
});

function table(lines: readonly PayoutStatusLine[]): string {
  const cell = (s: string | null, w: number) =>
    printable(s ?? '', { oneLine: true })
      .slice(0, w)
      .padEnd(w);
  const head = `${'reference'.padEnd(30)} ${'payee'.padEnd(24)} ${'amount'.padStart(12)} cur ${'status'.padEnd(10)} ${'paid'.padStart(12)} ${'paid on'.padEnd(10)} ${'bank reference'.padEnd(18)} paid to`;
  const rows = lines.map(
    (l) =>
      `${cell(l.reference, 30)} ${cell(l.payeeName, 24)} ${formatMinor(l.amount).padStart(12)} ${l.currency} ${l.status.padEnd(10)} ${formatMinor(l.paidOut).padStart(12)} ${cell(l.paidOn, 10)} ${cell(l.bankRef, 18)} ${cell(l.paidTo, 34).trimEnd()}`,
  );
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(l.status, (counts.get(l.status) ?? 0) + 1);
  const summary = [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
  return `${[head, ...rows].join('\n')}\n${lines.length} payouts${summary ? `: ${summary}` : ''}\n`;
}
