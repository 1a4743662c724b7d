import type { Command } from 'commander';
import { formatCsvIssue, importSubMerchants, readSubMerchantDirectory } from '../../ingest/sub-merchants';
import { storedClashes, storedDirectory } from '../../ingest/sub-merchant-clashes';
import { InputRefused, UsageError } from '../errors';
import { withRuntime } from '../runtime';
import { printable } from '../../input-rules';

export function register(program: Command): void {
  const group = program
    .command('sub-merchants')
    .description(
      "the sub-merchant directory (sub_merchant_id,name,reserve_hold_days): maps the register's receiverName to a sub-merchant",
    );

  group
    .command('import')
    .argument('[path]', 'a CSV file or a directory of *.csv (default: RECON_SUB_MERCHANTS)')
    .description(
      'validate the CSV and append a SubMerchantRegistered event per new or changed row (run `recon project` to see it in the ledgers)',
    )
    .action(async (target: string | undefined) => {
      await withRuntime(async (rt) => {
        const source = target ?? rt.config.subMerchantsPath;
        if (!source) throw new UsageError('give a CSV file or directory, or set RECON_SUB_MERCHANTS');
        const r = readSubMerchantDirectory(source);
        const issues = r.ok ? storedClashes(r.rows, await storedDirectory(rt.sql, rt.store)) : r.issues;
        if (!r.ok || issues.length) {
          throw new InputRefused(
            'SUB_MERCHANT_DIRECTORY_INVALID',
            `the sub-merchant directory has ${issues.length} problem${issues.length === 1 ? '' : 's'} (nothing imported):\n${issues.map((i) => `  ${formatCsvIssue(i)}`).join('\n')}`,
          );
        }
        const res = await importSubMerchants(rt.store, r.rows);
        process.stdout.write(
          `sub-merchants: ${r.rows.length} in ${source}; ${res.registered} registered or changed, ${res.unchanged} unchanged\n`,
        );
      });
    });

  group
    .command('list')
    .description('the directory as the journal projection knows it (run `recon project` after an import)')
    .option('--format <format>', 'table or csv', 'table')
    .action(async (opts: { format: string }) => {
      if (opts.format !== 'table' && opts.format !== 'csv')
        throw new UsageError(`--format must be table or csv (got ${opts.format})`);
      await withRuntime(async (rt) => {
        const [exists] =
          await rt.sql`select 1 from information_schema.views where table_schema = 'recon' and table_name = 'sub_merchants'`;
        if (!exists) {
          process.stdout.write('no directory yet: run `recon sub-merchants import` and `recon project`\n');
          return;
        }
        // by code unit, whatever the server's collation: one directory lists alike on every server
        const rows = await rt.sql<{ sub_merchant_id: string; name: string; reserve_hold_days: number }[]>`
          select sub_merchant_id, name, reserve_hold_days from recon.sub_merchants order by sub_merchant_id collate "C"`;
        if (opts.format === 'csv') {
          const q = (s: string) => (/[",\n\r]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
          process.stdout.write(
            [
              'sub_merchant_id,name,reserve_hold_days',
              ...rows.map((r) => `${q(r.sub_merchant_id)},${q(r.name)},${r.reserve_hold_days}`),
            ].join('\n') + '\n',
          );
          return;
        }
        // names stored before the directory checked them may hold escapes: shown, never acted on by the terminal
        const shown = rows.map((r) => ({ ...r, name: printable(r.name, { oneLine: true }) }));
        const w = Math.max(15, ...shown.map((r) => r.sub_merchant_id.length));
        const n = Math.max(4, ...shown.map((r) => r.name.length));
        process.stdout.write(`${'sub_merchant_id'.padEnd(w)}  ${'name'.padEnd(n)}  reserve_hold_days\n`);
        for (const r of shown)
          process.stdout.write(`${r.sub_merchant_id.padEnd(w)}  ${r.name.padEnd(n)}  ${r.reserve_hold_days}\n`);
        process.stdout.write(`${rows.length} sub-merchant${rows.length === 1 ? '' : 's'}\n`);
      });
    });
}
