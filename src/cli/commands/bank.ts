import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { FileOutcome } from '../../ingest/bank/apply';
import { csvMappingSchema, type CsvMapping } from '../../ingest/bank/csv';
import { FORMAT_OPTION } from '../../ingest/bank/detect';
import { BankImportRefused, importBankFiles } from '../../ingest/bank/import';
import { knownEventsOf } from '../../ingest/bank/known-events';
import type { BankFormat } from '../../ingest/bank/types';
import { UsageError, withRuntime } from '../runtime';

/** `recon bank`: bank statements as a source (docs/bank.md). */

function mappingFrom(file: string): CsvMapping {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`--mapping ${file}: ${(e as Error).message}`);
  }
  const parsed = csvMappingSchema.safeParse(raw);
  if (!parsed.success)
    throw new UsageError(
      `--mapping ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

function summary(outcomes: readonly FileOutcome[]): string {
  const lines: string[] = [];
  const sum = (k: 'statements' | 'statementsKnown' | 'entries' | 'entriesKnown' | 'pending') =>
    outcomes.reduce((n, o) => n + o[k], 0);
  for (const o of outcomes) {
    lines.push(
      `${o.file}: ${o.statements} statement${o.statements === 1 ? '' : 's'} new, ${o.statementsKnown} already known; ` +
        `${o.entries} entries new, ${o.entriesKnown} already known; ${o.pending} pending (not booked)`,
    );
    for (const u of o.unknown)
      lines.push(
        `  unknown account ${u.account}: statement ${u.statementId}, ${u.entries} entries not booked (configure the account in RECON_CONFIG's bank.accounts and import again)`,
      );
  }
  const unknown = outcomes.reduce((n, o) => n + o.unknown.length, 0);
  lines.push(
    `bank import: ${outcomes.length} file${outcomes.length === 1 ? '' : 's'}; statements ${sum('statements')} new, ${sum('statementsKnown')} already known; ` +
      `entries ${sum('entries')} new, ${sum('entriesKnown')} already known; ${unknown} statement${unknown === 1 ? '' : 's'} for unknown accounts`,
  );
  return lines.join('\n') + '\n';
}

export function register(program: Command): void {
  const group = program
    .command('bank')
    .description('bank statements (camt.053, MT940, CSV) of the configured bank accounts');

  group
    .command('import')
    .argument('<files...>', 'statement files (camt.053 XML, MT940, or CSV with --mapping)')
    .option('--format <format>', 'camt053, mt940 or csv (default: detected from the file)')
    .option('--mapping <file>', 'JSON column mapping of a CSV statement (docs/bank.md)')
    .description(
      'check every file whole (well-formed, each statement foots), then append each booked entry once; nothing is imported when any file is refused',
    )
    .action(async (files: string[], opts: { format?: string; mapping?: string }) => {
      let format: BankFormat | undefined;
      if (opts.format !== undefined) {
        format = FORMAT_OPTION[opts.format];
        if (!format) throw new UsageError(`--format must be camt053, mt940 or csv (got ${opts.format})`);
      }
      const mapping = opts.mapping ? mappingFrom(opts.mapping) : undefined;
      await withRuntime(async (rt, signal) => {
        try {
          const outcomes = await importBankFiles(rt.store, knownEventsOf(rt.store, rt.sql), files, {
            accounts: rt.config.bank.accounts,
            format,
            mapping,
            signal,
          });
          process.stdout.write(summary(outcomes));
        } catch (e) {
          if (e instanceof BankImportRefused) {
            process.stderr.write(`recon: bank import: ${e.message}\n`);
            process.exitCode = 1;
            return;
          }
          throw e;
        }
      });
    });
}
