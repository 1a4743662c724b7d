import { renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { executionHolidays } from '../../config/bank';
import { printable } from '../../input-rules';
import { readDirectory } from '../../people/directory';
import { actorFor } from '../../people/manage';
import type { Action } from '../../people/roles';
import { approveRun, cancelRun, draftRun, listRuns, paymentFile, sendRun, showRun } from '../../payout-runs/actions';
import { bankPaidEveryLine, paidByBankOf } from '../../payout-runs/bank-paid';
import { confirmPayeeAccount } from '../../payout-runs/payees';
import { releaseUnpaid } from '../../payout-runs/unpaid';
import { resolvedNowOf } from '../../payout-runs/resolved';
import { type PayoutRun, runJson, totalsOf } from '../../payout-runs/runs';
import { decimalText } from '../../payout-runs/pain001';
import { runProjections } from '../../projector/runner';
import { UsageError } from '../errors';
import { type Runtime, withRuntime, runnerDepsOf } from '../runtime';

/**
 * `recon payout-runs draft|list|show|approve|send|cancel|file|release-unpaid` (docs/exceptions.md, "Payout runs"). The person
 * acting is RECON_TOKEN's owner; the one who drafts a run never approves it.
 */

const token = () => process.env.RECON_TOKEN || undefined;

async function actor(rt: Runtime, action: Action) {
  return actorFor(await readDirectory(rt.store), token(), action);
}

/** What the bank paid on each reference, with the read models caught up first (a debit booked since is known). */
async function bankPaidNow(rt: Runtime, signal: AbortSignal) {
  const { config } = rt;
  await runProjections(runnerDepsOf(rt), { signal });
  return paidByBankOf(rt.sql, rt.store, config.bank.payouts, config.timezone);
}

/**
 * What the checks before approval, file and send read (actions.ts `LiveReadings`), the read models caught up
 * first: a debit imported since the run was drafted is known.
 */
async function liveReadings(rt: Runtime, signal: AbortSignal) {
  return { paidByBank: await bankPaidNow(rt, signal), resolvedNow: resolvedNowOf(rt.sql) };
}

const amount = (minor: string, currency: string) =>
  `${decimalText(BigInt(minor), currency) ?? `${minor}/100`} ${currency}`;
const one = (s: string) => printable(s, { oneLine: true });

function summaryLine(r: PayoutRun): string {
  const totals = totalsOf(r)
    .map((t) => `${amount(t.amount.toString(), t.currency)} (${t.count})`)
    .join(', ');
  return `${r.id}  ${r.status.padEnd(9)}  ${r.month}  drafted by ${one(r.draftedBy)}  ${totals}`;
}

function details(r: PayoutRun): string {
  const out = [summaryLine(r)];
  if (r.approvedBy) out.push(`approved by ${one(r.approvedBy)} at ${r.approvedAt}, execution ${r.executionDate}`);
  if (r.sentBy) out.push(`sent by ${one(r.sentBy)} at ${r.sentAt}, file sha-256 ${r.fileSha256}`);
  for (const t of r.fileTaken) out.push(`payment file taken by ${one(t.by)} at ${t.at}`);
  if (r.cancelledBy)
    out.push(
      `cancelled by ${one(r.cancelledBy)} at ${r.cancelledAt}${r.bankDidNotExecute ? ', saying the bank did not execute its file' : ''}: ${one(r.cancelReason ?? '')}`,
    );
  for (const u of r.unpaidReleased ?? [])
    out.push(
      `unpaid released by ${one(u.releasedBy)} at ${u.releasedAt}${u.bankDidNotExecute ? ', saying the bank will execute nothing more of its file' : ', past the due window'}: ${u.lines.map((l) => `${l.reference} ${amount(l.amount, l.currency)}`).join(', ')}: ${one(u.reason)}`,
    );
  out.push('transfers:');
  for (const l of r.lines) {
    const released = l.releasedHolds.length
      ? `  (released holds: ${l.releasedHolds.map((h) => `${h.discrepancyId} ${amount(h.amount, l.currency)} ${h.decision}`).join('; ')})`
      : '';
    out.push(
      `  ${l.reference}  ${amount(l.amount, l.currency)}  to ${one(l.creditorName)} ${l.creditorAccount}${l.creditorAgent ? ` (${l.creditorAgent})` : ''}${released}`,
    );
  }
  out.push(...leftOutLines(r));
  return out.join('\n');
}

function leftOutLines(r: Pick<PayoutRun, 'leftOut' | 'releasedSinceStatement' | 'heldInForce'>): string[] {
  const out: string[] = [];
  for (const l of r.leftOut) {
    // the step that pays it: a new payout account is trusted once a named approver confirms it
    const then =
      l.reason === 'payee_account_unconfirmed'
        ? `: its new payout account waits for an approver's recon payout-runs confirm-payee ${one(l.subMerchantId)} --account IBAN --note TEXT`
        : l.reason === 'name_not_in_charset'
          ? ": its legal_name (else name) in the directory has characters the payment file's character set (bank.payouts.charset) cannot write; give it in Latin letters"
          : '';
    out.push(
      `left out: ${one(l.subMerchantId)} ${amount(l.amount, l.currency)} ${l.reference ?? ''} (${l.reason}${then})`,
    );
  }
  for (const h of r.releasedSinceStatement)
    out.push(
      `released since the statement, paid once stated again: ${one(h.subMerchantId)} ${amount(h.amount, h.currency)} (discrepancy ${h.discrepancyId}, ${h.decision})`,
    );
  for (const h of r.heldInForce)
    out.push(
      `held, not paid: ${one(h.subMerchantId)} ${amount(h.amount, h.currency)} (discrepancy ${h.discrepancyId || 'none: not registered'})`,
    );
  return out;
}

function checkFormat(format: string): void {
  if (!['table', 'json'].includes(format))
    throw new UsageError(`--format must be table or json (got ${printable(format, { oneLine: true })})`);
}

export function register(program: Command): void {
  const group = program
    .command('payout-runs')
    .description('payouts of a month in one payment file (pain.001), drafted by one person and approved by another');
  readingCommands(group);
  lifeCommands(group);
  unpaidCommands(group);
  payeeCommands(group);
}

/** release-unpaid: what the bank did not pay of a sent run, freed for a new run by a named person */
function unpaidCommands(group: Command): void {
  group
    .command('release-unpaid')
    .argument('<run>', 'the run id, PR-YYYY-MM-n (a sent run)')
    .requiredOption(
      '--reason <text>',
      'why (the bank rejected the transfer, its statement shows it unpaid); kept with your name',
    )
    .option(
      '--bank-did-not-execute',
      'you say the bank will execute nothing more of its file (it rejected the transfers); without it, only transfers still unpaid past their due window are released',
    )
    .description(
      "free what the bank's imported debits did not pay of a sent run: the month's next draft pays it, under the same reference",
    )
    .action(async (id: string, opts: { reason: string; bankDidNotExecute?: boolean }) => {
      await withRuntime(async (rt, signal) => {
        const who = await actor(rt, 'payout-run.create');
        const { run, released } = await releaseUnpaid(rt.store, who, id, opts.reason, {
          paidByBank: await bankPaidNow(rt, signal),
          bankDidNotExecute: opts.bankDidNotExecute === true,
        });
        const what = released.map(
          (l) => `${l.reference} ${amount(l.amount, l.currency)} (the bank paid ${amount(l.paid, l.currency)})`,
        );
        process.stdout.write(
          `released ${run.id}'s unpaid ${what.join(', ')}; recon payout-runs draft --month ${run.month} pays it\n`,
        );
      });
    });
}

/** confirm-payee: a named approver trusts a payout account that replaced another */
function payeeCommands(group: Command): void {
  group
    .command('confirm-payee')
    .argument('<sub-merchant>', "the sub-merchant's id in the directory")
    .requiredOption('--account <IBAN>', 'the new payout account, as you checked it with the sub-merchant')
    .option('--bic <BIC>', 'its BIC, when the directory gives one')
    .requiredOption('--note <text>', 'how you checked it (a call back, a signed letter); kept with your name')
    .description(
      'confirm a payout account that replaced another in the directory: until then no run pays to it (left out, payee_account_unconfirmed)',
    )
    .action(async (id: string, opts: { account: string; bic?: string; note: string }) => {
      await withRuntime(async (rt) => {
        const done = await confirmPayeeAccount(rt.store, await actor(rt, 'payee.confirm'), {
          subMerchantId: id,
          account: opts.account,
          ...(opts.bic !== undefined ? { bic: opts.bic } : {}),
          note: opts.note,
        });
        process.stdout.write(
          done
            ? `confirmed ${id}'s payout account; the next run drafted pays to it\n`
            : `${id}'s payout account is already trusted; nothing recorded\n`,
        );
      });
    });
}

/** draft, list, show */
function readingCommands(group: Command): void {
  group
    .command('draft')
    .requiredOption('--month <YYYY-MM>', "the statements' month whose payouts the run pays")
    .description("draft the month's next payout run from its statements (again: the waiting draft, nothing new)")
    .action(async (opts: { month: string }) => {
      await withRuntime(async (rt, signal) => {
        const who = await actor(rt, 'payout-run.create');
        const r = await draftRun(rt.store, who, {
          month: opts.month,
          bank: rt.config.bank,
          env: process.env,
          paidByBank: await bankPaidNow(rt, signal),
          resolvedNow: resolvedNowOf(rt.sql),
        });
        if (!r.run) process.stdout.write(`nothing new to pay for ${opts.month}\n`);
        else process.stdout.write(`${r.created ? 'drafted' : 'already drafted, waiting for approval:'} ${r.run.id}\n`);
        const notes = leftOutLines(r.run ?? r.plan);
        if (notes.length) process.stdout.write(`${notes.join('\n')}\n`);
      });
    });

  group
    .command('list')
    .option('--format <format>', 'table or json', 'table')
    .description('every payout run, newest first')
    .action(async (opts: { format: string }) => {
      checkFormat(opts.format);
      await withRuntime(async (rt) => {
        const runs = await listRuns(rt.store, await actor(rt, 'read'));
        if (opts.format === 'json') process.stdout.write(`${JSON.stringify(runs.map(runJson), null, 2)}\n`);
        else process.stdout.write(runs.map((r) => `${summaryLine(r)}\n`).join(''));
      });
    });

  group
    .command('show')
    .argument('<run>', 'the run id, PR-YYYY-MM-n')
    .option('--format <format>', 'table or json', 'table')
    .description('one payout run: its transfers, what it leaves out and why, who drafted and approved it')
    .action(async (id: string, opts: { format: string }) => {
      checkFormat(opts.format);
      await withRuntime(async (rt) => {
        const r = await showRun(rt.store, await actor(rt, 'read'), id);
        process.stdout.write(opts.format === 'json' ? `${JSON.stringify(runJson(r), null, 2)}\n` : `${details(r)}\n`);
      });
    });
}

/** approve, file, send, cancel */
function lifeCommands(group: Command): void {
  group
    .command('approve')
    .argument('<run>', 'the run id, PR-YYYY-MM-n')
    .option('--execution-date <YYYY-MM-DD>', 'the day the bank executes the transfers (default: today)')
    .description('approve a draft (an approver who did not draft it); its payment file becomes available')
    .action(async (id: string, opts: { executionDate?: string }) => {
      await withRuntime(async (rt, signal) => {
        const who = await actor(rt, 'payout-run.approve');
        const r = await approveRun(rt.store, who, id, {
          timezone: rt.config.timezone,
          holidays: executionHolidays(rt.config.bank),
          ...(await liveReadings(rt, signal)),
          ...(opts.executionDate ? { executionDate: opts.executionDate } : {}),
        });
        process.stdout.write(`approved ${r.id}; the payment file: recon payout-runs file ${r.id} --out FILE\n`);
      });
    });

  group
    .command('file')
    .argument('<run>', 'the run id, PR-YYYY-MM-n')
    .option('--out <file>', 'write the file here (default: standard output)')
    .description("the approved run's payment file, ISO 20022 pain.001.001.09, for the bank")
    .action(async (id: string, opts: { out?: string }) => {
      await withRuntime(async (rt, signal) => {
        const who = await actor(rt, 'payout-run.send');
        const f = await paymentFile(rt.store, who, id, {
          timezone: rt.config.timezone,
          ...(await liveReadings(rt, signal)),
        });
        if (!opts.out) {
          process.stdout.write(f.xml);
          return;
        }
        // written beside, then renamed: a partial file never looks complete
        writeFileSync(`${opts.out}.partial`, f.xml);
        renameSync(`${opts.out}.partial`, opts.out);
        process.stderr.write(`wrote ${opts.out} (sha-256 ${f.sha256})\n`);
      });
    });

  group
    .command('send')
    .argument('<run>', 'the run id, PR-YYYY-MM-n')
    .description("record that the approved run's payment file went to the bank (its sha-256 is kept)")
    .action(async (id: string) => {
      await withRuntime(async (rt, signal) => {
        const who = await actor(rt, 'payout-run.send');
        const r = await sendRun(rt.store, who, id, {
          timezone: rt.config.timezone,
          ...(await liveReadings(rt, signal)),
        });
        process.stdout.write(`sent ${r.id} (file sha-256 ${r.fileSha256})\n`);
      });
    });

  group
    .command('cancel')
    .argument('<run>', 'the run id, PR-YYYY-MM-n')
    .requiredOption('--reason <text>', 'why, kept with the run')
    .option(
      '--bank-did-not-execute',
      'its payment file was taken: you say the bank will execute nothing (more) of it (it rejected it, or what it paid and what came back is imported); recorded with your name',
    )
    .description('cancel a draft, or an approved run not yet sent; what it would have paid can be drafted again')
    .action(async (id: string, opts: { reason: string; bankDidNotExecute?: boolean }) => {
      await withRuntime(async (rt, signal) => {
        const r = await cancelRun(rt.store, await actor(rt, 'payout-run.create'), id, opts.reason, new Date(), {
          bankDidNotExecute: opts.bankDidNotExecute === true,
          // the bank's debits imported since are known: the read models caught up first
          bankPaidEveryLine: async (run) => bankPaidEveryLine(run, await bankPaidNow(rt, signal)),
        });
        process.stdout.write(`cancelled ${r.id}\n`);
      });
    });
}
