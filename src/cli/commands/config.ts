import type { Command } from 'commander';
import { VARIABLES, requireConfig } from '../../config/env';
import { describeSubMerchantDirectory } from '../../ingest/sub-merchant-directory';

export function register(program: Command): void {
  program
    .command('config')
    .description(
      'check the configuration and print it with secrets hidden (exit 78 when invalid, 65 when the sub-merchant directory is)',
    )
    .option('--variables', 'list every variable with its default and an example')
    .action((opts: { variables?: boolean }) => {
      if (opts.variables) {
        for (const v of VARIABLES)
          process.stdout.write(`${v.name}\n    ${v.meaning}\n    default: ${v.default}; example: ${v.example}\n`);
        return;
      }
      // An invalid configuration or directory throws: the command line shows it with its code and exit code.
      const c = requireConfig();
      // The directory is checked as the commands that import it check it (no database needed).
      const subMerchantDirectory = c.subMerchantsPath ? describeSubMerchantDirectory(c.subMerchantsPath) : undefined;
      const shown = {
        ...c,
        databaseUrl: c.databaseUrl ? '(set)' : '(embedded)',
        eventStoreUrl: c.eventStoreUrl ? '(set)' : '(postgres)',
        auditorToken: c.auditorToken ? '(set)' : '(unset)',
        ordersToken: c.ordersToken ? '(set)' : '(unset)',
        projects: c.projects.map((p) => ({
          name: p.name,
          posId: p.posId,
          baseUrl: p.baseUrl,
          reportUrl: p.reportUrl,
          apiKey: '(set)',
          apiSecret: '(set)',
          endpointsKey: '(set)',
          authScheme: p.authScheme,
        })),
        subMerchantDirectory: subMerchantDirectory ?? '(unset: RECON_SUB_MERCHANTS)',
      };
      // the bank's tolerances are bigint minor units: shown as their digits (JSON.stringify threw on them)
      process.stdout.write(JSON.stringify(shown, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
    });
}
