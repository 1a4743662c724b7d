import type { Command } from 'commander';
import {
  acceptDiscrepancy,
  discrepanciesCsv,
  discrepanciesTable,
  discrepancyJson,
  listDiscrepancies,
} from '../../reconciliation/discrepancy-queries';
import { runProjections } from '../../projection/runner';
import { UsageError, withRuntime, type Runtime } from '../runtime';

/** Brings the reconciliation read model up to the store's head, so that what is printed is current. */
async function catchUp(rt: Runtime, signal: AbortSignal): Promise<void> {
  await runProjections(
    {
      sql: rt.sql,
      store: rt.store,
      log: rt.log,
      timezone: rt.config.timezone,
      graceHours: rt.config.graceHours,
      bank: rt.config.bank,
    },
    { names: ['reconciliation'], signal },
  );
}

interface ListOptions {
  from?: string;
  to?: string;
  type?: string;
  status?: string;
  subMerchant?: string;
  payment?: string;
  format: string;
  catchUp: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('discrepancies')
    .description(
      'list the discrepancies between the register, the period transactions and the webhooks\n' +
        "(days are local days of RECON_TIMEZONE, of the operation's time); `accept ID` records an auditor's decision",
    )
    .option('--from <day>', 'first day, YYYY-MM-DD')
    .option('--to <day>', 'last day, YYYY-MM-DD (inclusive)')
    .option('--type <type>', 'one type, e.g. missing_in_report, amount_mismatch')
    .option('--status <status>', 'open, resolved or accepted')
    .option('--sub-merchant <id>', 'only discrepancies involving this sub_merchant_id')
    .option('--payment <paymentId>', 'only this payment')
    .option('--format <format>', 'table, json or csv', 'table')
    .option('--no-catch-up', 'read the views as they are, without applying new events first')
    .action(async (opts: ListOptions) => {
      if (!['table', 'json', 'csv'].includes(opts.format))
        throw new UsageError(`--format must be table, json or csv (got ${opts.format})`);
      await withRuntime(async (rt, signal) => {
        if (opts.catchUp) await catchUp(rt, signal);
        const r = await listDiscrepancies(rt.sql, {
          from: opts.from,
          to: opts.to,
          type: opts.type,
          status: opts.status,
          subMerchantId: opts.subMerchant,
          paymentId: opts.payment,
          timezone: rt.config.timezone,
        });
        if (!r.ok) throw new UsageError(r.message);
        if (opts.format === 'json') process.stdout.write(JSON.stringify(r.value.map(discrepancyJson), null, 2) + '\n');
        else if (opts.format === 'csv') process.stdout.write(discrepanciesCsv(r.value));
        else process.stdout.write(discrepanciesTable(r.value));
      });
    });

  cmd
    .command('accept <id>')
    .description("accept a discrepancy (an auditor's decision, kept as an event): --note and --by are required")
    .requiredOption('--note <text>', 'why the difference is acceptable')
    .requiredOption('--by <name>', 'who accepts it')
    .option('--decision <decision>', 'for money held on the statements: pay (release it) or withhold (keep holding it)')
    .action(async (id: string, opts: { note: string; by: string; decision?: string }) => {
      if (opts.decision !== undefined && opts.decision !== 'pay' && opts.decision !== 'withhold')
        throw new UsageError(`--decision must be pay or withhold (got ${JSON.stringify(opts.decision)})`);
      if (!opts.note.trim()) throw new UsageError('--note must not be empty');
      if (!opts.by.trim()) throw new UsageError('--by must not be empty');
      await withRuntime(async (rt, signal) => {
        await catchUp(rt, signal);
        const r = await acceptDiscrepancy(
          { sql: rt.sql, store: rt.store },
          {
            id,
            note: opts.note,
            by: opts.by,
            at: new Date(),
            ...(opts.decision ? { decision: opts.decision as 'pay' | 'withhold' } : {}),
          },
        );
        if (!r.ok) throw new UsageError(r.message);
        await catchUp(rt, signal);
        process.stdout.write(`accepted ${r.discrepancy.type} ${id} (event ${r.eventId})\n`);
      });
    });
}
