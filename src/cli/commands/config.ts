import type { Command } from 'commander';
import { VARIABLES, loadConfig, formatConfigIssues } from '../../config/env';
import { describeSubMerchantDirectory, SubMerchantDirectoryError } from '../../ingest/sub-merchant-directory';

export function register(program: Command): void {
  program
    .command('config')
    .description('check the configuration and print it with secrets hidden (exit 2 when invalid)')
    .option('--variables', 'list every variable with its default and an example')
    .action((opts: { variables?: boolean }) => {
      if (opts.variables) {
        for (const v of VARIABLES)
          process.stdout.write(`${v.name}\n    ${v.meaning}\n    default: ${v.default}; example: ${v.example}\n`);
        return;
      }
      const r = loadConfig();
      if (!r.ok) {
        process.stderr.write(formatConfigIssues(r.issues) + '\n');
        process.exitCode = 2;
        return;
      }
      const c = r.config;
      // The directory is checked as the commands that import it check it (no database needed).
      let subMerchantDirectory: ReturnType<typeof describeSubMerchantDirectory> | undefined;
      try {
        subMerchantDirectory = c.subMerchantsPath ? describeSubMerchantDirectory(c.subMerchantsPath) : undefined;
      } catch (e) {
        if (!(e instanceof SubMerchantDirectoryError)) throw e;
        process.stderr.write(`recon cannot start: ${e.message}\n`);
        process.exitCode = 2;
        return;
      }
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
      process.stdout.write(JSON.stringify(shown, null, 2) + '\n');
    });
}
