import { existsSync } from 'node:fs';
import { documentText } from '../../input-rules';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Sql } from '../../db/connect';
import { dataOf, isEvent, newEvent } from '../../events/catalog';
import { StatementSendFailed, StatementSent, statementDeliveryStream } from '../../events/delivery-events';
import { StatementIssued, statementStream } from '../../events/statement-events';
import { sha256Hex, stableStringify } from '../../canonical';
import type { Logger } from '../../log';
import type { EventStore, RecordedEvent } from '../../store/types';
import { fileSha256 } from './issue';

/**
 * `recon statements send`: e-mails each sub-merchant the files of the month's latest statement run
 * (PDF and workbook; finance's audit file stays in the company). A sending is an event; the same files to the same address are never sent twice
 * unless `--resend`, and a failure is recorded and tried again by the next run. SMTP has no idempotency of
 * its own: a crash between the server's acceptance and the event would send once more on the next run,
 * with the same Message-ID, which mail systems use to drop repeats (docs/outputs.md).
 */

export interface Recipient {
  readonly email: string;
  readonly name: string;
  /** the language of the message (the directory's `language`; English when absent) */
  readonly language?: 'uk' | 'en';
}

export interface DeliveryFile {
  readonly name: string;
  readonly sha256: string;
}

export type DeliveryStatus = 'send' | 'sent-before' | 'no-address' | 'file-missing' | 'file-changed';

export interface PlannedDelivery {
  readonly subMerchantId: string;
  readonly name: string | null;
  readonly to: string | null;
  readonly language?: 'uk' | 'en';
  readonly files: readonly DeliveryFile[];
  readonly status: DeliveryStatus;
  /** 0 for a first sending, n for the n-th resend */
  readonly resend: number;
  /** failed attempts recorded for this sending so far */
  readonly failures: number;
}

export interface DeliveryDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly recipientOf: (subMerchantId: string) => Promise<Recipient | undefined>;
  readonly now?: () => Date;
}

export interface DeliveryOptions {
  readonly month: string;
  /** where the run's files were written (RECON_OUT_DIR by default) */
  readonly outDir: string;
  readonly subMerchantId?: string;
  readonly resend?: boolean;
  /** a stop (SIGINT/SIGTERM): no further mail is begun; the one in flight is finished and recorded */
  readonly signal?: AbortSignal;
}

interface RunFile {
  name: string;
  sha256: string;
  subMerchantId?: string;
  /** a statement's audit file: finance's, never sent */
  financeOnly?: boolean;
}

/**
 * Per sub-merchant, the files of the latest run of the month that stated it (the latest cut wins): its PDF and
 * workbook, never finance's audit file (event ids, the cut, hashes: nothing internal leaves the company).
 */
export async function latestStatementFiles(sql: Sql, month: string): Promise<Map<string, DeliveryFile[]>> {
  const runs = await sql<{ position: string; files: RunFile[] }[]>`
    select position, files from statement_runs where month = ${month}
    order by split_part(position, '/', 1)::numeric, split_part(position, '/', 2)::numeric, issued_at, run_id`;
  const out = new Map<string, DeliveryFile[]>();
  for (const run of runs) {
    const bySub = new Map<string, DeliveryFile[]>();
    for (const f of run.files) {
      if (!f.subMerchantId || f.financeOnly) continue;
      bySub.set(f.subMerchantId, [...(bySub.get(f.subMerchantId) ?? []), { name: f.name, sha256: f.sha256 }]);
    }
    for (const [id, files] of bySub)
      out.set(
        id,
        [...files].sort((a, b) => (a.name < b.name ? -1 : 1)),
      );
  }
  return out;
}

const keyOf = (d: { subMerchantId: string; to: string; files: readonly DeliveryFile[] }) =>
  stableStringify({ subMerchantId: d.subMerchantId, to: d.to, files: d.files });

interface History {
  sent: Map<string, number>;
  failures: Map<string, number>;
}

async function history(store: EventStore, month: string): Promise<History> {
  const sent = new Map<string, number>();
  const failures = new Map<string, number>();
  const events: RecordedEvent[] = await store.readStream(statementDeliveryStream(month));
  for (const e of events) {
    if (e.type === StatementSent.type) {
      const d = StatementSent.schema.parse(e.data);
      const k = keyOf(d);
      sent.set(k, Math.max(sent.get(k) ?? 0, d.resend + 1));
    } else if (e.type === StatementSendFailed.type) {
      const d = StatementSendFailed.schema.parse(e.data);
      const k = `${keyOf(d)}#${d.resend}`;
      failures.set(k, Math.max(failures.get(k) ?? 0, d.attempt));
    }
  }
  return { sent, failures };
}

/** What a run would do, sub-merchant by sub-merchant (the dry run prints exactly this). */
export async function planDelivery(deps: DeliveryDeps, opts: DeliveryOptions): Promise<PlannedDelivery[]> {
  const files = await latestStatementFiles(deps.sql, opts.month);
  const past = await history(deps.store, opts.month);
  const ids = [...files.keys()].filter((id) => !opts.subMerchantId || id === opts.subMerchantId).sort();
  const out: PlannedDelivery[] = [];
  for (const subMerchantId of ids) {
    const list = files.get(subMerchantId) ?? [];
    const recipient = await deps.recipientOf(subMerchantId);
    const base = {
      subMerchantId,
      // as a document prints it (one line, no control characters or bidirectional overrides, at most 200
      // characters): the name goes into the subject and the greeting, whatever was stored before it was checked
      name: recipient?.name ? documentText(recipient.name) || null : null,
      files: list,
      ...(recipient?.language ? { language: recipient.language } : {}),
    };
    if (!recipient) {
      out.push({ ...base, to: null, status: 'no-address', resend: 0, failures: 0 });
      continue;
    }
    const key = keyOf({ subMerchantId, to: recipient.email, files: list });
    const sentTimes = past.sent.get(key) ?? 0;
    const resend = sentTimes > 0 && opts.resend ? sentTimes : 0;
    const failures = past.failures.get(`${key}#${resend}`) ?? 0;
    let status: DeliveryStatus = sentTimes > 0 && !opts.resend ? 'sent-before' : 'send';
    if (status === 'send') status = await checkFiles(opts.outDir, list);
    out.push({ ...base, to: recipient.email, status, resend, failures });
  }
  return out;
}

async function checkFiles(outDir: string, files: readonly DeliveryFile[]): Promise<DeliveryStatus> {
  for (const f of files) {
    const p = path.join(outDir, f.name);
    if (!existsSync(p)) return 'file-missing';
    if ((await fileSha256(p)) !== f.sha256) return 'file-changed';
  }
  return 'send';
}

/**
 * The right side of a statement's Message-ID: the sender's own domain (what mail systems expect, RFC 5322), never
 * the internal tool's name, since the header leaves the company with the mail.
 */
export function senderDomain(from: string): string {
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  const domain = address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
  return address.includes('@') && /^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(domain) ? domain : 'localhost';
}

/** What became of a sending tried: sent, or the server's answer. */
export type DeliveryOutcome = { readonly sent: true } | { readonly sent: false; readonly error: string };

export interface DeliveryResult {
  readonly planned: readonly PlannedDelivery[];
  readonly sent: number;
  readonly failed: number;
  /** per sub-merchant tried: sent, or the server's answer (what the command prints: the plan said "to send" for both) */
  readonly outcomes: ReadonlyMap<string, DeliveryOutcome>;
}

/**
 * Sends what the plan says to send, recording each sending or failure as an event. One sending of a month at a
 * time (a session advisory lock; the second waits, then plans from what the first recorded): two at once each
 * planned before the other had recorded anything, and every statement went out twice (found in review 13).
 */
export async function sendStatements(
  deps: DeliveryDeps & { readonly transport: Transporter; readonly from: string },
  opts: DeliveryOptions,
): Promise<DeliveryResult> {
  const key = `recon:statements-send:${opts.month}`;
  const lock = await deps.sql.reserve();
  let locked = false;
  try {
    // tried every 200 ms rather than waited for: a stop ends the wait
    while (!locked) {
      const [r] = await lock<{ locked: boolean }[]>`select pg_try_advisory_lock(hashtextextended(${key}, 0)) as locked`;
      locked = r?.locked === true;
      if (!locked) {
        opts.signal?.throwIfAborted();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    return await sendPlanned(deps, opts);
  } finally {
    if (locked) await lock`select pg_advisory_unlock(hashtextextended(${key}, 0))`.catch(() => {});
    lock.release();
  }
}

async function sendPlanned(
  deps: DeliveryDeps & { readonly transport: Transporter; readonly from: string },
  opts: DeliveryOptions,
): Promise<DeliveryResult> {
  const planned = await planDelivery(deps, opts);
  const dispute = await disputeTermsOf(deps.store, opts.month);
  const now = deps.now ?? (() => new Date());
  let sent = 0;
  let failed = 0;
  const outcomes = new Map<string, DeliveryOutcome>();
  for (const p of planned) {
    if (p.status !== 'send' || !p.to) continue;
    opts.signal?.throwIfAborted();
    const key = { month: opts.month, subMerchantId: p.subMerchantId, to: p.to, files: [...p.files] };
    const messageId = `<statement-${sha256Hex(stableStringify({ ...key, resend: p.resend })).slice(0, 32)}@${senderDomain(deps.from)}>`;
    try {
      await deps.transport.sendMail({
        from: deps.from,
        to: p.to,
        subject: `${p.language === 'uk' ? 'Виплатна виписка' : 'Payout statement'} ${opts.month}${p.name ? ` — ${p.name}` : ''}`,
        text: messageText(opts.month, p.name, p.language ?? 'en', dispute),
        messageId,
        attachments: p.files.map((f) => ({ filename: f.name, path: path.join(opts.outDir, f.name) })),
      });
    } catch (e) {
      failed++;
      const error = describeSmtpError(e);
      outcomes.set(p.subMerchantId, { sent: false, error });
      deps.log.warn('statement not sent', { subMerchantId: p.subMerchantId, to: p.to, attempt: p.failures + 1, error });
      await deps.store.append(statementDeliveryStream(opts.month), [
        newEvent(StatementSendFailed, {
          ...key,
          resend: p.resend,
          attempt: p.failures + 1,
          error,
          failedAt: now().toISOString(),
        }),
      ]);
      continue;
    }
    sent++;
    outcomes.set(p.subMerchantId, { sent: true });
    // The id leaves the time out: the same sending recorded twice (a retry of the append) is one event.
    await deps.store.append(statementDeliveryStream(opts.month), [
      newEvent(
        StatementSent,
        { ...key, resend: p.resend, messageId, sentAt: now().toISOString() },
        { idContent: { ...key, resend: p.resend } },
      ),
    ]);
    deps.log.info('statement sent', { subMerchantId: p.subMerchantId, resend: p.resend });
  }
  return { planned, sent, failed, outcomes };
}

/**
 * The dispute terms the month's statements were issued with (RECON_STATEMENT_DISPUTE, recorded with its first
 * run, as the statements print them), or undefined when none was set: the e-mail must not promise other terms.
 */
async function disputeTermsOf(store: EventStore, month: string): Promise<string | undefined> {
  for (const e of await store.readStream(statementStream(month))) {
    if (!isEvent(StatementIssued, e)) continue;
    const settings = dataOf(StatementIssued, e).settings;
    if (settings) return settings.dispute;
  }
  return undefined;
}

function messageText(month: string, name: string | null, language: 'uk' | 'en', dispute?: string): string {
  if (language === 'uk')
    return [
      'Добрий день!',
      '',
      `У вкладенні ваша виплатна виписка за ${month}.`,
      dispute ?? 'Якщо якась сума відрізняється від ваших даних, дайте відповідь на цей лист протягом 30 днів.',
      '',
    ].join('\n');
  return [
    name ? `Dear ${name},` : 'Hello,',
    '',
    `please find attached your payout statement for ${month}.`,
    dispute ?? 'If any figure differs from your records, reply to this message within 30 days.',
    '',
  ].join('\n');
}

/** The server's answer or the connection error, never the credentials of the SMTP URL. */
export function describeSmtpError(e: unknown): string {
  const err = e as { response?: string; code?: string; message?: string };
  const text = err.response ?? err.message ?? String(e);
  return `${err.code ? `${err.code}: ` : ''}${text}`.replace(/\/\/[^@\s/]*@/g, '//***@').slice(0, 2000);
}
