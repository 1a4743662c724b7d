import type { Command } from 'commander';
import { type Config, VARIABLES, requireConfig, secretValues } from '../../config/env';
import { describeSubMerchantDirectory } from '../../ingest/sub-merchant-directory';
import { unknownVariableWarnings } from '../../config/unknown-variables';

export function register(program: Command): void {
  program
    .command('config')
    .description(
      'check the configuration and print it with secrets hidden (exit 78 when invalid, 65 when the sub-merchant directory is); a RECON_* variable recon does not read is warned of on stderr',
    )
    .option('--variables', 'list every variable with its default and an example')
    .action((opts: { variables?: boolean }) => {
      if (opts.variables) {
        for (const v of VARIABLES)
          process.stdout.write(`${v.name}\n    ${v.meaning}\n    default: ${v.default}; example: ${v.example}\n`);
        return;
      }
      // warned, not refused (another program of the deployment may share the prefix), and before the problems
      for (const w of unknownVariableWarnings(process.env)) process.stderr.write(`recon config: warning: ${w}\n`);
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
        mail: c.mail ? { smtpUrl: withoutPassword(c.mail.smtpUrl), from: c.mail.from } : '(unset: RECON_SMTP_URL)',
        subMerchantDirectory: subMerchantDirectory ?? '(unset: RECON_SUB_MERCHANTS)',
      };
      // the bank's tolerances are bigint minor units: shown as their digits (JSON.stringify threw on them)
      process.stdout.write(
        JSON.stringify(hidden(shown, c), (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n',
      );
    });
}

/** A URL with its password replaced by `***`; other text as it is. */
function withoutPassword(text: string): string {
  try {
    const u = new URL(text);
    if (!u.password) return text;
    u.password = '***';
    return u.toString();
  } catch {
    return text;
  }
}

/**
 * Every string of what is shown, with a URL's password hidden and any secret value in force (the PSP keys,
 * the tokens, the passwords of the connection strings) replaced wherever it appears: a secret added to the
 * configuration later is hidden without this command knowing its name.
 */
function hidden(value: unknown, config: Config): unknown {
  const secrets = secretValues(config).sort((a, b) => b.length - a.length);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      let t = withoutPassword(v);
      for (const s of secrets) t = t.split(s).join('(hidden)');
      return t;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !(v instanceof Date))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value);
}
