import type { Command } from 'commander';
import { type ActionRequest, actOnException } from '../../exceptions/actions';
import { BULK_ACTIONS, type BulkAction, bulkAct, changesDigest } from '../../exceptions/bulk';
import type { ExceptionDeps } from '../../exceptions/context';
import { ExceptionRefused } from '../../exceptions/errors';
import { exceptionPolicyOf } from '../../exceptions/policy';
import {
  checkExceptionFilter,
  type ExceptionFilter,
  exceptionHistory,
  exceptionJson,
  getException,
  listExceptions,
} from '../../exceptions/queries';
import { exceptionMoney, exceptionPageJson, exceptionTable, printExceptionList } from '../exception-print';
import { openSpool } from '../spool';
import { StdoutClosed, stdoutWriter } from '../stdout';
import { printable } from '../../input-rules';
import type { Person } from '../../people/directory';
import { readDirectory } from '../../people/directory';
import { actorFor } from '../../people/manage';
import { runProjections } from '../../projector/runner';
import { InputRefused, UsageError } from '../errors';
import { importDecisions, sheetProblemText } from '../../exceptions/import';
import { readFileSync } from 'node:fs';
import { type Runtime, withRuntime, runnerDepsOf } from '../runtime';
import { moneySeenOf } from '../options';

/**
 * `recon exceptions list|show|assign|comment|resolve|accept|approve|reject|reopen|bulk` (docs/exceptions.md).
 * The person acting is RECON_TOKEN's owner; their role is checked by the action (src/exceptions/actions.ts),
 * the same checks as the HTTP API's. Refusals exit 2 naming the option.
 */

const PROJECTIONS = ['reconciliation', 'orders', 'payouts', 'settlement', 'exceptions'];

async function catchUp(rt: Runtime, signal: AbortSignal): Promise<void> {
  await runProjections(runnerDepsOf(rt), { names: PROJECTIONS, signal });
}

function depsOf(rt: Runtime): ExceptionDeps {
  const { policy, issues } = exceptionPolicyOf(rt.config.exceptions);
  if (issues.length) throw new UsageError(`RECON_CONFIG: ${issues.join('; ')}`);
  return { sql: rt.sql, store: rt.store, policy };
}

/** The owner of RECON_TOKEN (any role: what they may do is the action's to check). */
async function actingPerson(rt: Runtime): Promise<Person> {
  const u = actorFor(await readDirectory(rt.store), process.env.RECON_TOKEN || undefined, 'read');
  return { id: u.id, name: u.name, role: u.role };
}

/** An action's refusal with the option's spelling (`--note: …`), so the message names what to type. */
function asUsage(e: unknown): never {
  if (e instanceof ExceptionRefused && e.field !== null && e.field !== 'id' && e.message.startsWith(`${e.field}:`))
    throw new UsageError(`--${e.message}`, e.code);
  throw e;
}

interface FilterOptions {
  leg?: string;
  type?: string;
  state?: string;
  assignee?: string;
  severity?: string;
  subMerchant?: string;
  currency?: string;
  minAmount?: string;
  minAge?: string;
}

function filterOf(o: FilterOptions): ExceptionFilter {
  if (o.minAmount !== undefined && !/^\d{1,18}$/.test(o.minAmount))
    throw new UsageError('--min-amount: expected whole minor units (e.g. 10000 for 100.00)');
  if (o.minAge !== undefined && !/^\d{1,7}$/.test(o.minAge)) throw new UsageError('--min-age: expected whole hours');
  return {
    leg: o.leg,
    type: o.type,
    state: o.state,
    assignee: o.assignee,
    severity: o.severity,
    subMerchantId: o.subMerchant,
    currency: o.currency,
    minAmount: o.minAmount === undefined ? undefined : BigInt(o.minAmount),
    minAgeHours: o.minAge === undefined ? undefined : Number(o.minAge),
  };
}

function filterOptions(cmd: Command): Command {
  return cmd
    .option('--leg <leg>', 'psp, orders, payouts or settlement')
    .option('--type <type>', 'one discrepancy type')
    .option('--state <state>', 'open, assigned, pending_approval, resolved_by_hand, accepted, reopened or resolved')
    .option('--assignee <user>', 'assigned to this user id')
    .option('--severity <severity>', 'low, medium, high or critical')
    .option('--sub-merchant <id>', 'involving this sub-merchant')
    .option('--currency <code>', 'in this currency')
    .option('--min-amount <minor>', 'amount in doubt at least this, in minor units')
    .option('--min-age <hours>', 'at least this many hours since detection');
}

/** The whole list, printed into a spool as it is read and then to stdout (as `recon discrepancies` does). */
async function printWhole(
  rt: Runtime,
  f: ExceptionFilter,
  deps: ExceptionDeps,
  format: 'table' | 'json',
  signal: AbortSignal,
): Promise<void> {
  try {
    checkExceptionFilter(f);
  } catch (e) {
    asUsage(e);
  }
  const spool = openSpool();
  try {
    await printExceptionList(rt.sql, f, { now: new Date(), policy: deps.policy, format }, (text) => {
      signal.throwIfAborted();
      return spool.write(text);
    });
    await spool.copyTo(stdoutWriter(signal));
  } catch (e) {
    // the reader left (`| head`): the command ends with 141, as main decides (src/cli/stdout.ts)
    if (!(e instanceof StdoutClosed)) throw e;
  } finally {
    spool.remove();
  }
}

const checkFormat = (f: string) => {
  if (!['table', 'json'].includes(f))
    throw new UsageError(`--format must be table or json (got ${printable(f, { oneLine: true })})`);
};

function registerReads(group: Command): void {
  filterOptions(group.command('list'))
    .option('--limit <n>', 'at most this many (1-1000); the next page follows with --after')
    .option('--after <cursor>', 'the `next` printed with the page before')
    .option('--format <format>', 'table or json', 'table')
    .option('--no-catch-up', 'read the views as they are')
    .description('the exceptions of every leg with their state, severity, due date and assignee')
    .action(async (o: FilterOptions & { limit?: string; after?: string; format: string; catchUp: boolean }) => {
      checkFormat(o.format);
      if (o.limit !== undefined && !/^\d{1,4}$/.test(o.limit))
        throw new UsageError('--limit: expected a whole number from 1 to 1000');
      await withRuntime(async (rt, signal) => {
        await actingPerson(rt);
        if (o.catchUp) await catchUp(rt, signal);
        const deps = depsOf(rt);
        const f = { ...filterOf(o), limit: o.limit === undefined ? undefined : Number(o.limit), after: o.after };
        if (f.limit === undefined) return printWhole(rt, f, deps, o.format as 'table' | 'json', signal);
        const page = await listExceptions(rt.sql, f, new Date(), deps.policy).catch(asUsage);
        if (o.format === 'json') process.stdout.write(exceptionPageJson(page.items, page.next));
        else process.stdout.write(exceptionTable(page.items) + (page.next ? `next page: --after ${page.next}\n` : ''));
      });
    });

  group
    .command('show <id>')
    .option('--format <format>', 'table or json', 'table')
    .description('one exception and its history in order: who, what, when, why')
    .action(async (id: string, o: { format: string }) => {
      checkFormat(o.format);
      await withRuntime(async (rt, signal) => {
        await actingPerson(rt);
        await catchUp(rt, signal);
        const x = await getException(rt.sql, id, new Date(), depsOf(rt).policy);
        if (x === null) throw new UsageError(`no discrepancy with id ${printable(id, { oneLine: true })}`, 'NOT_FOUND');
        const history = await exceptionHistory(rt.sql, x.id);
        if (o.format === 'json')
          return void process.stdout.write(`${JSON.stringify({ ...exceptionJson(x), history }, null, 2)}\n`);
        const lines = [
          `${x.type} (${x.leg}) ${x.id}`,
          `state ${x.state}${x.why ? ` (${x.why})` : ''}, severity ${x.severity}, due ${x.dueAt ?? '-'}, assignee ${x.assignee ?? '-'}`,
          `amount in doubt ${exceptionMoney(x)}${x.amountInDoubt === null ? '' : ` (${x.amountInDoubt} minor units)`}; ${x.whatDiffers}`,
          ...(x.acceptance ? [`decision in force: ${x.decision ?? 'accepted'} (acceptance ${x.acceptance})`] : []),
          ...(x.pending
            ? [
                `waiting for approval: ${x.pending.decision ?? 'decision'} proposed by ${x.pending.by} (proposal ${x.pending.id}): ${x.pending.note}`,
              ]
            : []),
          'history:',
          ...history.map((h) => `  ${h.at}  ${h.by}  ${h.action}${h.why ? `: ${h.why}` : ''}`),
        ];
        process.stdout.write(`${printable(lines.join('\n'))}\n`);
      });
    });
}

/** Runs one action as RECON_TOKEN's owner and prints what it did. */
async function act(request: ActionRequest): Promise<void> {
  await withRuntime(async (rt, signal) => {
    const actor = await actingPerson(rt);
    await catchUp(rt, signal);
    const r = await actOnException(depsOf(rt), actor, request).catch(asUsage);
    await catchUp(rt, signal);
    process.stdout.write(`${r.id}: ${r.summary} (by ${actor.id})\n`);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The proposal the person saw, when they name it: another one waiting by now is refused. */
function proposalOf(o: { proposal?: string }): { proposal?: string } {
  if (o.proposal === undefined) return {};
  if (!UUID.test(o.proposal)) throw new UsageError('--proposal: expected the proposal id recon exceptions show prints');
  return { proposal: o.proposal.toLowerCase() };
}

/** The decision in force the person saw (none: a hand resolution), when they name it: another is not revoked. */
function acceptanceOf(o: { acceptance?: string }): { acceptance?: string | null } {
  if (o.acceptance === undefined) return {};
  if (o.acceptance === 'none') return { acceptance: null };
  if (!UUID.test(o.acceptance))
    throw new UsageError('--acceptance: expected the acceptance id recon exceptions show prints, or none');
  return { acceptance: o.acceptance.toLowerCase() };
}

function registerActions(group: Command): void {
  group
    .command('assign <id>')
    .requiredOption('--assignee <user>', 'the user id who works it')
    .option('--due <instant>', 'due date-time with a zone; default: the SLA of its severity')
    .option('--note <text>', 'why it is assigned (kept in its history)')
    .description('assign an exception to a user, with a due date')
    .action((id: string, o: { assignee: string; due?: string; note?: string }) =>
      act({
        action: 'assign',
        id,
        assignee: o.assignee,
        ...(o.due ? { dueAt: o.due } : {}),
        ...(o.note !== undefined ? { note: o.note } : {}),
      }),
    );
  group
    .command('comment <id>')
    .requiredOption('--text <text>', 'the comment')
    .description('comment on an exception')
    .action((id: string, o: { text: string }) => act({ action: 'comment', id, text: o.text }));
  group
    .command('resolve <id>')
    .requiredOption('--reason-code <code>', 'explained_elsewhere, duplicate, timing, corrected_at_source or other')
    .requiredOption('--note <text>', 'why it is resolved (kept in its history)')
    .option('--amount-in-doubt <minor>', 'the amount in doubt you saw, minor units (41000 for 410.00) or none')
    .option('--currency <code>', 'with --amount-in-doubt: the currency you saw (or none)')
    .description('resolve by hand an exception that holds no money (one that does needs a decision: accept)')
    .action((id: string, o: { reasonCode: string; note: string; amountInDoubt?: string; currency?: string }) =>
      act({ action: 'resolve', id, reasonCode: o.reasonCode, note: o.note, ...moneySeenOf(o) }),
    );
  group
    .command('accept <id>')
    .requiredOption('--note <text>', 'why the difference is acceptable')
    .option('--decision <decision>', 'pay, withhold or write_off (required where money is held)')
    .option('--amount-in-doubt <minor>', 'the amount in doubt you saw, minor units (41000 for 410.00) or none')
    .option('--currency <code>', 'with --amount-in-doubt: the currency you saw (or none)')
    .description('decide an exception: in force at once, or a proposal a second person approves (a large write-off)')
    .action((id: string, o: { note: string; decision?: string; amountInDoubt?: string; currency?: string }) =>
      act({
        action: 'accept',
        id,
        note: o.note,
        ...(o.decision !== undefined ? { decision: o.decision } : {}),
        ...moneySeenOf(o),
      }),
    );
  group
    .command('approve <id>')
    .requiredOption('--note <text>', 'why it is approved (kept on the acceptance)')
    .option('--proposal <id>', 'the proposal you saw (recon exceptions show): another one waiting is refused')
    .description("approve another person's proposal (an approver)")
    .action((id: string, o: { note: string; proposal?: string }) =>
      act({ action: 'approve', id, note: o.note, ...proposalOf(o) }),
    );
  group
    .command('reject <id>')
    .requiredOption('--note <text>', 'why it is rejected (kept in its history)')
    .option('--proposal <id>', 'the proposal you saw (recon exceptions show): another one waiting is refused')
    .description('reject a proposal waiting for approval (an approver)')
    .action((id: string, o: { note: string; proposal?: string }) =>
      act({ action: 'reject', id, note: o.note, ...proposalOf(o) }),
    );
  group
    .command('reopen <id>')
    .requiredOption('--reason <text>', 'why: new evidence, a decision taken back')
    .option('--acceptance <id>', 'the decision in force you saw (recon exceptions show), or none: another is refused')
    .description('reopen an accepted (its decision revoked, an approver) or hand-resolved exception')
    .action((id: string, o: { reason: string; acceptance?: string }) =>
      act({ action: 'reopen', id, reason: o.reason, ...acceptanceOf(o) }),
    );
}

function registerBulk(group: Command): void {
  filterOptions(group.command('bulk <action>'))
    .requiredOption('--reason <text>', 'why, recorded on every exception changed')
    .option('--to <user>', 'assign: the user id who works them')
    .option('--reason-code <code>', 'resolve: the hand resolution reason code')
    .option('--decision <decision>', 'accept: pay, withhold or write_off')
    .option('--dry-run', 'list what would change (a decision with its money in doubt) and its preview; write nothing')
    .option('--expect <preview>', 'the preview a --dry-run printed: applied only while the plans are still those')
    .description(`${BULK_ACTIONS.join(', ')} every exception matching the filter`)
    .action(
      async (
        action: string,
        o: FilterOptions & {
          reason: string;
          to?: string;
          reasonCode?: string;
          decision?: string;
          dryRun?: boolean;
          expect?: string;
        },
      ) => {
        if (!(BULK_ACTIONS as readonly string[]).includes(action))
          throw new UsageError(`<action>: expected one of ${BULK_ACTIONS.join(', ')}`);
        if (action === 'assign' && !o.to)
          throw new UsageError('--to: required for bulk assign (the user id who works them)');
        if (action === 'resolve' && !o.reasonCode) throw new UsageError('--reason-code: required for bulk resolve');
        await withRuntime(async (rt, signal) => {
          const actor = await actingPerson(rt);
          await catchUp(rt, signal);
          const request = {
            action: action as BulkAction,
            reason: o.reason,
            ...(o.to ? { assignee: o.to } : {}),
            ...(o.reasonCode ? { reasonCode: o.reasonCode } : {}),
            ...(o.decision ? { decision: o.decision } : {}),
          };
          // the apply of a preview does what it listed, the money of each decision included (as the console's)
          const opts = { dryRun: o.dryRun === true, ...(o.expect !== undefined ? { expected: o.expect } : {}) };
          const r = await bulkAct(depsOf(rt), actor, filterOf(o), request, opts).catch(asUsage);
          if (!r.dryRun) await catchUp(rt, signal);
          const verb = r.dryRun ? 'would' : 'did';
          const lines = [
            ...r.changes.map((c) => `${verb} ${c.summary}${c.inDoubt ? ` (${c.inDoubt} in doubt)` : ''}: ${c.id}`),
            ...r.skipped.map((s) => `skipped ${s.id}: ${s.reason}`),
          ];
          if (r.dryRun) lines.push(`preview ${changesDigest(r.changes)} (apply exactly this: --expect it)`);
          lines.push(`${r.changes.length} ${r.dryRun ? 'would change' : 'changed'}, ${r.skipped.length} skipped`);
          process.stdout.write(`${printable(lines.join('\n'))}\n`);
        });
      },
    );
}

function registerImport(group: Command): void {
  group
    .command('import <file>')
    .option('--dry-run', 'check every row and list what would change; write nothing')
    .description('apply a filled-in Decisions sheet (.xlsx) all or nothing: every row checked first')
    .action(async (file: string, o: { dryRun?: boolean }) => {
      let content: Buffer;
      try {
        content = readFileSync(file);
      } catch (e) {
        throw new UsageError(
          `<file>: cannot read ${printable(file, { oneLine: true })} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
      await withRuntime(async (rt, signal) => {
        const actor = await actingPerson(rt);
        await catchUp(rt, signal);
        const r = await importDecisions(depsOf(rt), actor, content, {
          dryRun: o.dryRun === true,
          timezone: rt.config.timezone,
        });
        if (!r.ok)
          throw new InputRefused(
            'DECISIONS_REFUSED',
            `${file}: nothing imported:\n${r.problems.map(sheetProblemText).join('\n')}`,
          );
        if (!o.dryRun) await catchUp(rt, signal);
        const verb = o.dryRun ? 'would' : 'did';
        const lines = r.changes.map((c) => `row ${c.row}: ${verb} ${c.summary}: ${c.id}`);
        lines.push(
          `${r.changes.length} row${r.changes.length === 1 ? '' : 's'} ${o.dryRun ? 'would change' : 'changed'}`,
        );
        process.stdout.write(`${printable(lines.join('\n'))}\n`);
      });
    });
}

export function register(program: Command): void {
  const group = program
    .command('exceptions')
    .description(
      "discrepancies of every leg as work: assign, comment, resolve, decide, approve, reopen; as RECON_TOKEN's owner (docs/exceptions.md)",
    );
  registerReads(group);
  registerActions(group);
  registerBulk(group);
  registerImport(group);
}
