import type { Command } from 'commander';
import { acceptDiscrepancy, checkFilter, isKnownSubMerchant } from '../../reconciliation/discrepancy-queries';
import { DISCREPANCY_SORTS, type DiscrepancySort } from '../../reconciliation/discrepancy-listing';
import { withDiscrepancyPasses } from '../../reconciliation/discrepancy-stream';
import { exceptionPolicyOf } from '../../exceptions/policy';
import { needsSecondPerson } from '../../exceptions/severity';
import { runProjections } from '../../projector/runner';
import { calendarDay, moneySeenOf } from '../options';
import { UsageError } from '../errors';
import { StdoutClosed, stdoutWriter } from '../stdout';
import { openSpool } from '../spool';
import { type ListFormat, printDiscrepancies } from '../discrepancy-print';
import { withRuntime, type Runtime, runnerDepsOf } from '../runtime';
import { readDirectory } from '../../people/directory';
import { actorFor } from '../../people/manage';
import { checkText, NOTE_TEXT } from '../../input-rules';

/**
 * Brings the reconciliation and orders read models up to the store's head, so that what is printed is current
 * (an acceptance of an order discrepancy is applied by the orders projection).
 */
async function catchUp(rt: Runtime, signal: AbortSignal): Promise<void> {
  await runProjections(runnerDepsOf(rt), { names: ['reconciliation', 'orders'], signal });
}

interface ListOptions {
  from?: string;
  to?: string;
  type?: string;
  status?: string;
  subMerchant?: string;
  payment?: string;
  format: string;
  sort?: string;
  catchUp: boolean;
}

/** Every option checked before the database starts; messages name the option as typed. */
function checkListOptions(opts: ListOptions): void {
  if (!['table', 'json', 'csv'].includes(opts.format))
    throw new UsageError(`--format must be table, json or csv (got ${opts.format})`);
  if (opts.sort !== undefined && !(DISCREPANCY_SORTS as readonly string[]).includes(opts.sort))
    throw new UsageError(`--sort must be ${DISCREPANCY_SORTS.join(' or ')} (got ${opts.sort})`);
  if (opts.from !== undefined) calendarDay('--from', opts.from);
  if (opts.to !== undefined) calendarDay('--to', opts.to);
  // the remaining checks are the query's own (type, status, from after to), with the option's spelling
  const checked = checkFilter({ from: opts.from, to: opts.to, type: opts.type, status: opts.status, timezone: 'UTC' });
  if (!checked.ok) throw new UsageError(`--${checked.message}`);
}

export function register(program: Command): void {
  const cmd = program
    .command('discrepancies')
    .description(
      "list the discrepancies of every leg (the PSP's sources with each other, orders and fee contract, payouts " +
        "and bank debits, settlements and bank credits; days are local days of RECON_TIMEZONE, of the operation's " +
        "time); `accept ID` records an auditor's decision",
    )
    .option('--from <day>', 'first day, YYYY-MM-DD')
    .option('--to <day>', 'last day, YYYY-MM-DD (inclusive)')
    .option('--type <type>', 'one type, e.g. missing_in_report, amount_mismatch')
    .option('--status <status>', 'open, resolved or accepted')
    .option('--sub-merchant <id>', 'only discrepancies involving this sub_merchant_id')
    .option('--payment <paymentId>', 'only this payment')
    .option('--format <format>', 'table, json or csv', 'table')
    .option('--sort <order>', 'amount (largest first) or age (oldest first); default: oldest first')
    .option('--no-catch-up', 'read the views as they are, without applying new events first')
    .action(async (opts: ListOptions) => {
      checkListOptions(opts);
      await withRuntime(async (rt, signal) => {
        if (opts.catchUp) await catchUp(rt, signal);
        if (opts.subMerchant !== undefined && (await isKnownSubMerchant(rt.sql, opts.subMerchant)) === false)
          process.stderr.write(
            `recon: warning: --sub-merchant ${opts.subMerchant} is not in the sub-merchant directory (a typo?)\n`,
          );
        const filter = {
          from: opts.from,
          to: opts.to,
          type: opts.type,
          status: opts.status,
          subMerchantId: opts.subMerchant,
          paymentId: opts.payment,
          timezone: rt.config.timezone,
        };
        const sort = (opts.sort ?? 'age') as DiscrepancySort;
        // read and printed whole into a spool first, so the snapshot is not held while a reader pages through it
        const spool = openSpool();
        try {
          const r = await withDiscrepancyPasses(rt.sql, filter, sort, (pass) =>
            printDiscrepancies(rt.sql, pass, opts.format as ListFormat, (text) => {
              signal.throwIfAborted();
              return spool.write(text);
            }),
          );
          if (!r.ok) throw new UsageError(r.message);
          await spool.copyTo(stdoutWriter(signal));
        } catch (e) {
          // the reader left (`| head`): the command ends with 141, as main decides (src/cli/stdout.ts)
          if (!(e instanceof StdoutClosed)) throw e;
        } finally {
          spool.remove();
        }
      });
    });

  acceptCommand(cmd);
}

/** `recon discrepancies accept ID`: a decision signed by RECON_TOKEN's owner. */
function acceptCommand(cmd: Command): void {
  cmd
    .command('accept <id>')
    .description(
      "accept an open discrepancy (a decision kept as an event, signed by RECON_TOKEN's owner): --note is required; a resolved one is refused",
    )
    .requiredOption('--note <text>', 'why the difference is acceptable')
    .option('--decision <decision>', 'for money held on the statements: pay (release it) or withhold (keep holding it)')
    .option('--amount-in-doubt <minor>', 'the amount in doubt you saw, minor units (41000 for 410.00) or none')
    .option('--currency <code>', 'with --amount-in-doubt: the currency you saw (or none)')
    .action(
      async (id: string, opts: { note: string; decision?: string; amountInDoubt?: string; currency?: string }) => {
        if (opts.decision !== undefined && opts.decision !== 'pay' && opts.decision !== 'withhold')
          throw new UsageError(
            `--decision must be pay or withhold (got ${JSON.stringify(opts.decision)}); a write-off: recon exceptions accept`,
          );
        if (!opts.note.trim()) throw new UsageError('--note must not be empty');
        // the note is kept for good: checked, and its card numbers masked, as every note a person writes
        const note = checkText(opts.note, NOTE_TEXT);
        if (!note.ok) throw new UsageError(`--note: ${note.reason}`);
        // decided on the money its person saw, when they name it: changed since, refused and nothing written
        const seen = moneySeenOf(opts);
        await withRuntime(async (rt, signal) => {
          // the person deciding is the token's owner, allowed to decide (docs/exceptions.md)
          const by = actorFor(await readDirectory(rt.store), process.env.RECON_TOKEN || undefined, 'exception.propose');
          const { policy, issues } = exceptionPolicyOf(rt.config.exceptions);
          if (issues.length) throw new UsageError(`RECON_CONFIG: ${issues.join('; ')}`);
          await catchUp(rt, signal);
          const r = await acceptDiscrepancy(
            { sql: rt.sql, store: rt.store },
            {
              id,
              note: note.value,
              by: by.id,
              at: new Date(),
              ...(opts.decision ? { decision: opts.decision as 'pay' | 'withhold' } : {}),
              ...seen,
              releaseAllowed: (amount, currency) => !needsSecondPerson(policy, 'pay', amount, currency),
            },
          );
          if (!r.ok) throw new UsageError(r.message, r.code === 'MONEY_CHANGED' ? 'CONFLICT' : 'USAGE');
          await catchUp(rt, signal);
          process.stdout.write(`accepted ${r.discrepancy.type} ${id} (event ${r.eventId})\n`);
        });
      },
    );
}
