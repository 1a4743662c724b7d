import type { Command } from 'commander';
import { type Verification, verifyJournal } from '../../audit/verify';
import { UsageError } from '../errors';
import { withRuntime } from '../runtime';

/**
 * `recon audit verify [--expect-head HASH]`: whether the people's actions in the event store are still the ones
 * the audit journal chained (docs/audit.md). Exit 0 intact, 1 naming the first position where they part, or
 * when the head an auditor noted is not in the chain.
 */

function report(v: Verification, expectHead: string | undefined): { text: string; ok: boolean } {
  const lines: string[] = [];
  const upTo = v.checkpoint ?? '(nothing journaled yet)';
  if (v.problem) {
    const p = v.problem;
    lines.push(
      `audit journal NOT intact at position ${p.position} (entry ${p.seq}, ${p.type} ${p.eventId}): ${p.kind.replace('_', ' ')}`,
      `  ${p.detail}`,
      `intact before it: ${v.entries} entries, head ${v.head || '(none)'}`,
    );
  } else {
    lines.push(
      `audit journal intact: ${v.entries} people's actions up to position ${upTo}`,
      `head ${v.head || '(none)'}`,
    );
  }
  if (v.pending > 0) lines.push(`${v.pending} later people's actions not journaled yet (recon project journals them)`);
  if (expectHead !== undefined) {
    lines.push(
      v.expected
        ? `the noted head is entry ${v.expected.seq} (position ${v.expected.position}): the chain still passes through it`
        : `the noted head ${expectHead} is NOT in the chain${v.problem ? ' before the first problem' : ''}: what was journaled up to it has been rewritten (or it was noted on another store)`,
    );
  }
  return { text: `${lines.join('\n')}\n`, ok: v.problem === undefined && v.expected !== null };
}

export function register(program: Command): void {
  const audit = program
    .command('audit')
    .description("the tamper-evident journal of people's actions (decisions, approvals, payout runs, users)");
  audit
    .command('verify')
    .description(
      "reads the people's actions from the event store again, recomputes their hash chain and compares it with the audit " +
        'journal: exit 0 intact (with the count and the head hash to write down), 1 naming the first position where an ' +
        'event was altered, removed or inserted, or when the head given is not in the chain',
    )
    .option('--expect-head <hash>', 'a head hash written down earlier: the chain must still pass through it')
    .action(async (opts: { expectHead?: string }) => {
      if (opts.expectHead !== undefined && !/^[0-9a-fA-F]{64}$/.test(opts.expectHead))
        throw new UsageError(
          `--expect-head: expected a SHA-256 in hex (64 characters), got ${JSON.stringify(opts.expectHead)}`,
        );
      await withRuntime(async (rt, signal) => {
        const v = await verifyJournal({ sql: rt.sql, store: rt.store, signal }, { expectHead: opts.expectHead });
        const { text, ok } = report(v, opts.expectHead?.toLowerCase());
        process.stdout.write(text);
        if (!ok) process.exitCode = 1;
      });
    });
}
