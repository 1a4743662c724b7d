import path from 'node:path';
import type { Command } from 'commander';
import nodemailer from 'nodemailer';
import { SubMerchantRegistered, subMerchantStream } from '../events/ledger-events';
import {
  type DeliveryOutcome,
  type DeliveryResult,
  latestStatementFiles,
  type PlannedDelivery,
  planDelivery,
  type Recipient,
  sendStatements,
} from '../export/statements/delivery';
import type { Sql } from '../db/connect';
import type { EventStore } from '../store/types';
import { NotConfigured, UsageError } from './errors';
import { withRuntime } from './runtime';

/** The address of a sub-merchant: the `email` of its latest directory version. */
export function directoryRecipients(store: EventStore): (subMerchantId: string) => Promise<Recipient | undefined> {
  return async (subMerchantId) => {
    const events = await store.readStream(subMerchantStream(subMerchantId));
    const last = events.filter((e) => e.type === SubMerchantRegistered.type).at(-1);
    if (!last) return undefined;
    const d = last.data as { name: string; email?: string | null; legalName?: string | null; language?: 'uk' | 'en' };
    return d.email
      ? { email: d.email, name: d.legalName ?? d.name, ...(d.language ? { language: d.language } : {}) }
      : undefined;
  };
}

const STATUS_TEXT: Record<PlannedDelivery['status'], string> = {
  send: 'to send',
  'sent-before': 'sent before (use --resend to send again)',
  'no-address': 'no e-mail address in the directory',
  'file-missing': 'a file of the run is not in the output directory',
  'file-changed': 'a file differs from what was issued (sha-256)',
};

/** After sending: what happened, where the plan said "to send" (a refused recipient named with the server's answer). */
function outcomeText(p: PlannedDelivery, outcome: DeliveryOutcome | undefined): string {
  if (!outcome) return STATUS_TEXT[p.status];
  return outcome.sent ? 'sent' : `failed: ${outcome.error.replace(/\s+/g, ' ')} (tried again by the next run)`;
}

/**
 * A month never issued, or a sub-merchant without a statement in it (a typo), is refused: sending nothing and
 * saying "0 sent, 0 failed", exit 0, made a sending run before the statements (or for no one) look done.
 */
async function refuseNothingToSend(sql: Sql, month: string, subMerchantId: string | undefined): Promise<void> {
  const files = await latestStatementFiles(sql, month);
  if (files.size === 0)
    throw new UsageError(
      `--month: no statements were issued for ${month} (recon statements --month ${month} issues them)`,
      'STATEMENTS_NOT_ISSUED',
    );
  if (subMerchantId !== undefined && !files.has(subMerchantId))
    throw new UsageError(
      `--sub-merchant: ${JSON.stringify(subMerchantId)} has no statement in the latest run of ${month} (${files.size} sub-merchants have one)`,
      'STATEMENT_NOT_FOUND',
    );
}

/** `recon statements send --month M [--sub-merchant ID] [--out DIR] [--resend] [--dry-run]` */
export function addSendCommand(statements: Command): void {
  // `statements` has a --month of its own: without positional options it took the one after `send`, and
  // `send` then said "required option '--month' not specified" whatever was typed. Commander reads options
  // positionally only when every command above the subcommand does (the root passes on what follows its own).
  for (let c: Command | null = statements; c; c = c.parent) c.enablePositionalOptions();
  statements
    .command('send')
    .description("e-mail each sub-merchant the files of the month's latest statement run (RECON_SMTP_URL)")
    .requiredOption('--month <YYYY-MM>', 'month of the statements')
    .option('--sub-merchant <id>', 'only this sub-merchant')
    .option('--out <dir>', 'where the run wrote its files (default: RECON_OUT_DIR)')
    .option('--resend', 'send again what was sent before')
    .option('--dry-run', 'list what would be sent, send nothing')
    .action(async (opts: { month: string; subMerchant?: string; out?: string; resend?: boolean; dryRun?: boolean }) => {
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month))
        throw new UsageError(`--month: expected YYYY-MM, got ${JSON.stringify(opts.month)}`);
      await withRuntime(async (rt, signal) => {
        const outDir = path.resolve(opts.out ?? rt.config.outDir);
        const deps = { sql: rt.sql, store: rt.store, log: rt.log, recipientOf: directoryRecipients(rt.store) };
        const options = {
          month: opts.month,
          outDir,
          ...(opts.subMerchant ? { subMerchantId: opts.subMerchant } : {}),
          ...(opts.resend ? { resend: true } : {}),
        };
        const print = (planned: readonly PlannedDelivery[], outcomes?: DeliveryResult['outcomes']) => {
          for (const p of planned)
            process.stdout.write(
              `${p.subMerchantId}\t${p.to ?? '-'}\t${outcomeText(p, outcomes?.get(p.subMerchantId))}\t${p.files.map((f) => f.name).join(', ')}\n`,
            );
        };
        await refuseNothingToSend(rt.sql, opts.month, opts.subMerchant);
        if (opts.dryRun) {
          print(await planDelivery(deps, options));
          return;
        }
        const mail = rt.config.mail;
        if (!mail) throw new NotConfigured('RECON_SMTP_URL and RECON_MAIL_FROM must be set to send statements');
        const transport = nodemailer.createTransport(mail.smtpUrl);
        try {
          const r = await sendStatements({ ...deps, transport, from: mail.from }, { ...options, signal });
          print(r.planned, r.outcomes);
          const noAddress = r.planned.filter((p) => p.status === 'no-address').length;
          const badFiles = r.planned.filter((p) => p.status === 'file-missing' || p.status === 'file-changed').length;
          process.stdout.write(
            `${r.sent} sent, ${r.failed} failed${noAddress ? `, ${noAddress} without an e-mail address` : ''}${badFiles ? `, ${badFiles} not sent: a file missing or changed` : ''}\n`,
          );
          // a statement that did not reach its sub-merchant is not a sending done
          if (r.failed + noAddress + badFiles > 0) process.exitCode = 1;
        } finally {
          transport.close();
        }
      });
    });
}
