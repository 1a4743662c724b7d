import { jsonFileText } from '../../config/json-file';
import type { Command } from 'commander';
import type { FileOutcome } from '../../ingest/bank/apply';
import { csvMappingSchema, type CsvMapping } from '../../ingest/bank/csv';
import { encodingName } from '../../ingest/bank/decode';
import { FORMAT_OPTION, FORMAT_OPTION_NAMES } from '../../ingest/bank/detect';
import { importBankFiles } from '../../ingest/bank/import';
import { knownEventsOf } from '../../ingest/bank/known-events';
import type { BankFormat } from '../../ingest/bank/types';
import { formatMinor } from '../../ingest/bank/amount';
import { keyGivenTwice } from '../../config/project-file';
import { calendarDay } from '../options';
import { printable } from '../../input-rules';
import { UsageError } from '../errors';
import { type Runtime, withRuntime } from '../runtime';

/** `recon bank`: bank statements as a source (docs/bank.md). */

/** The CSV column mapping of `--mapping FILE`; a refusal names the option, the file and the field. */
export function mappingFrom(file: string): CsvMapping {
  let raw: unknown;
  try {
    const text = jsonFileText(file);
    raw = JSON.parse(text);
    const twice = keyGivenTwice(text);
    if (twice) throw new Error(twice);
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
  // file names, accounts and statement ids come from the files: escaped as the tables are
  return lines.map((l) => printable(l, { oneLine: true })).join('\n') + '\n';
}

export function register(program: Command): void {
  const group = program
    .command('bank')
    .description('bank statements (camt.053, MT940, CSV) of the configured bank accounts');
  registerImport(group);
  registerStatements(group);
  registerEntries(group);
}

function registerImport(group: Command): void {
  group
    .command('import')
    .argument('<files...>', 'statement files (camt.053 XML, MT940, or CSV with --mapping)')
    .option('--format <format>', `${FORMAT_OPTION_NAMES} (default: detected from the file)`)
    .option('--mapping <file>', 'JSON column mapping of a CSV statement (docs/bank.md)')
    .option(
      '--encoding <label>',
      "MT940/CSV files' encoding, e.g. windows-1252 (default: RECON_CONFIG bank.encoding, else UTF-8)",
    )
    .description(
      'check every file whole (well-formed, each statement foots), then append each booked entry once; nothing is imported when any file is refused',
    )
    .action(async (files: string[], opts: { format?: string; mapping?: string; encoding?: string }) => {
      if (opts.encoding !== undefined && !encodingName(opts.encoding))
        throw new UsageError(`--encoding: not an encoding recon can decode (got ${opts.encoding})`);
      let format: BankFormat | undefined;
      if (opts.format !== undefined) {
        format = FORMAT_OPTION[opts.format];
        if (!format) throw new UsageError(`--format must be ${FORMAT_OPTION_NAMES} (got ${opts.format})`);
      }
      const mapping = opts.mapping ? mappingFrom(opts.mapping) : undefined;
      await withRuntime(async (rt, signal) => {
        // A refused file (BankImportRefused) is a data error naming each problem.
        const outcomes = await importBankFiles(rt.store, knownEventsOf(rt.store, rt.sql), files, {
          accounts: rt.config.bank.accounts,
          format,
          mapping,
          encoding: opts.encoding ?? rt.config.bank.encoding,
          signal,
        });
        process.stdout.write(summary(outcomes));
      });
    });
}

function registerStatements(group: Command): void {
  group
    .command('statements')
    .description('imported bank statements (run `recon project` after an import)')
    .option('--account <id>', 'one account (IBAN or account number)')
    .action(async (opts: { account?: string }) => {
      await withRuntime(async (rt) => {
        if (!(await hasView(rt, 'bank_statements'))) return;
        const account = opts.account?.replace(/\s+/g, '').toUpperCase() ?? null;
        // text by code unit, whatever the server's collation: the same statements list alike on every server
        const rows = await rt.sql<Record<string, string | number | bigint>[]>`
          select account_id, statement_id, format, opening_date::text, closing_date::text, currency,
                 opening_balance, closing_balance, entries
          from recon.bank_statements where ${account}::text is null or account_id = ${account}
          order by account_id collate "C", closing_date, statement_id collate "C"`;
        table(
          ['account', 'statement', 'format', 'from', 'to', 'currency', 'opening', 'closing', 'entries'],
          rows.map((r) => [
            r.account_id,
            r.statement_id,
            r.format,
            r.opening_date,
            r.closing_date,
            r.currency,
            formatMinor(BigInt(r.opening_balance!)),
            formatMinor(BigInt(r.closing_balance!)),
            r.entries,
          ]),
        );
      });
    });
}

function registerEntries(group: Command): void {
  group
    .command('entries')
    .description('booked bank entries (run `recon project` after an import)')
    .option('--account <id>', 'one account (IBAN or account number)')
    .option('--from <day>', 'first booking day (YYYY-MM-DD)')
    .option('--to <day>', 'last booking day (YYYY-MM-DD)')
    .action(async (opts: { account?: string; from?: string; to?: string }) => {
      const from = opts.from === undefined ? null : calendarDay('--from', opts.from);
      const to = opts.to === undefined ? null : calendarDay('--to', opts.to);
      await withRuntime(async (rt) => {
        if (!(await hasView(rt, 'bank_entries'))) return;
        const account = opts.account?.replace(/\s+/g, '').toUpperCase() ?? null;
        // text by code unit, whatever the server's collation: the same entries list alike on every server
        const rows = await rt.sql<Record<string, string | number | bigint | boolean | null>[]>`
          select booking_date::text, account_id, direction, signed_amount, currency, counterparty_name, remittance,
                 bank_ref, is_return, statement_id
          from recon.bank_entries
          where (${account}::text is null or account_id = ${account})
            and (${from}::date is null or booking_date >= ${from}::date)
            and (${to}::date is null or booking_date <= ${to}::date)
          order by booking_date, account_id collate "C", bank_ref collate "C" nulls last, event_id`;
        table(
          ['booked', 'account', 'amount', 'currency', 'counterparty', 'remittance', 'bank ref', 'return', 'statement'],
          rows.map((r) => [
            r.booking_date,
            r.account_id,
            formatMinor(BigInt(r.signed_amount as bigint)),
            r.currency,
            r.counterparty_name,
            r.remittance,
            r.bank_ref,
            r.is_return ? 'yes' : '',
            r.statement_id,
          ]),
        );
      });
    });
}

async function hasView(rt: Runtime, name: string): Promise<boolean> {
  const [exists] =
    await rt.sql`select 1 from information_schema.views where table_schema = 'recon' and table_name = ${name}`;
  if (!exists) process.stdout.write('no bank statements yet: run `recon bank import` and `recon project`\n');
  return Boolean(exists);
}

/**
 * Cells are texts from bank files (counterparty, remittance, references): written with `printable`, so that an
 * ANSI escape, a control character or a bidirectional override shows as its escape instead of acting on the
 * terminal, and a line break inside a cell as \n.
 */
function table(header: readonly string[], rows: readonly (readonly unknown[])[]): void {
  const text = rows.map((r) =>
    r.map((c) => (c === null || c === undefined ? '' : printable(String(c), { oneLine: true }))),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(
    `${line(header)}\n${text.map(line).join('\n')}${text.length ? '\n' : ''}${rows.length} row${rows.length === 1 ? '' : 's'}\n`,
  );
}
