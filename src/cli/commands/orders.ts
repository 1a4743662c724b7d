import { accessSync, constants } from 'node:fs';
import type { Command } from 'commander';
import { OrderConflictError, formatOrderIssue, importOrderFile } from '../../ingest/orders/import';
import { formatOf } from '../../ingest/orders/records';
import { InputRefused, UsageError } from '../errors';
import { withRuntime } from '../runtime';
import { printable } from '../../input-rules';

export function register(program: Command): void {
  const group = program
    .command('orders')
    .description("the marketplace's orders: what it asked the PSP to take and how to split it (docs/orders.md)");

  group
    .command('import')
    .argument('<file>', 'a CSV (header row) or NDJSON (one JSON object a line) file of orders')
    .option('--format <format>', 'csv or ndjson (default: from the file name: .csv, .ndjson, .jsonl)')
    .description(
      'validate every record, then append one event per order version (idempotent: an import run again appends nothing); nothing is written when any record is bad',
    )
    .action(async (file: string, opts: { format?: string }) => {
      const format = formatOf(file, opts.format);
      if (!format) throw new UsageError(`--format must be csv or ndjson (cannot tell from the name ${file})`);
      try {
        accessSync(file, constants.R_OK);
      } catch (e) {
        throw new InputRefused('ORDERS_FILE_UNREADABLE', `${file}: cannot read: ${(e as Error).message}`);
      }
      await withRuntime(async (rt) => {
        let r: Awaited<ReturnType<typeof importOrderFile>>;
        try {
          r = await importOrderFile(rt.store, file, format);
        } catch (e) {
          if (e instanceof OrderConflictError) throw new InputRefused(e.code, `${e.message} (import stopped here)`);
          throw e;
        }
        if (!r.ok) {
          throw new InputRefused(
            'ORDERS_FILE_INVALID',
            `${file}: ${r.issues.length}${r.issues.length >= 50 ? '+' : ''} bad record${r.issues.length === 1 ? '' : 's'} (nothing imported):\n${r.issues.map((i) => `  ${printable(formatOrderIssue(i), { oneLine: true })}`).join('\n')}`,
          );
        }
        process.stdout.write(
          `orders: ${r.records} records in ${file}; ${r.appended} new versions, ${r.duplicates} already recorded (run \`recon project\` to match them)\n`,
        );
      });
    });
}
