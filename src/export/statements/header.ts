import type { StatementsConfig } from '../../config/statements';
import { dataOf, isEvent, newEvent } from '../../events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../events/ledger-events';
import { StatementNumbered, statementNumberStream } from '../../events/statement-events';
import { comparePositions, type EventStore, type NewEvent, type Position, type RecordedEvent } from '../../store/types';
import type { StatementHeader } from './figures';
import { documentText } from '../../input-rules';

/**
 * A statement's header from recorded events only, so that a run issued again at the same cut prints the same
 * header: the sub-merchant's directory row as it stood at the cut, its statement number (StatementNumbered),
 * and the issue time the run was recorded with. The issuer and the texts come from the configuration.
 */

export interface DirectoryDetails {
  readonly legalName?: string;
  readonly taxId?: string;
  readonly address?: string;
  readonly language?: 'uk' | 'en';
}

/**
 * The sub-merchant's latest directory row at or before the cut (none for a receiver not in the directory). The
 * texts as a document prints them (documentText: one line, no control characters or bidirectional overrides,
 * bounded), whatever was stored before the directory checked them; the recipient's name is the legal name, else
 * the directory's name at the cut, so that the title, the "Sub-merchant" block and the e-mail say the same.
 */
export async function directoryAt(store: EventStore, subMerchantId: string, cut: Position): Promise<DirectoryDetails> {
  const events = await store.readStream(subMerchantStream(subMerchantId));
  const last = events.filter((e) => isEvent(SubMerchantRegistered, e) && comparePositions(e.position, cut) <= 0).at(-1);
  if (!last) return {};
  const d = dataOf(SubMerchantRegistered, last);
  const name = documentText(d.legalName || d.name);
  const taxId = d.taxId ? documentText(d.taxId, 40) : '';
  const address = d.address ? documentText(d.address, 300) : '';
  return {
    ...(name ? { legalName: name } : {}),
    ...(taxId ? { taxId } : {}),
    ...(address ? { address } : {}),
    ...(d.language ? { language: d.language } : {}),
  };
}

export interface NumberClaim {
  readonly number: number;
  /** the event to append once the statement is written; absent when the run already had its number */
  readonly append?: { stream: string; event: NewEvent; expectedRevision: number | 'no_stream' };
}

/** The number of this run's statement: the one it was given before, else the sub-merchant's next. */
export async function claimNumber(
  store: EventStore,
  subMerchantId: string,
  month: string,
  runEventId: string,
): Promise<NumberClaim> {
  const stream = statementNumberStream(subMerchantId);
  const all = await store.readStream(stream);
  const numbers = all.filter((e) => isEvent(StatementNumbered, e)).map((e) => dataOf(StatementNumbered, e));
  const mine = numbers.find((n) => n.run === runEventId);
  if (mine) return { number: mine.number };
  const number = numbers.reduce((max, n) => Math.max(max, n.number), 0) + 1;
  const event = newEvent(
    StatementNumbered,
    { subMerchantId, number, month, run: runEventId },
    { idContent: { subMerchantId, run: runEventId } },
  );
  return { number, append: { stream, event, expectedRevision: all.at(-1)?.revision ?? 'no_stream' } };
}

/** "0007": the number as printed (sequential per sub-merchant; the id beside it makes it unique). */
export const numberText = (n: number) => String(n).padStart(4, '0');

/** When the run was recorded as issued: its event's `issuedAt`, else the time the store recorded it. */
export function issuedAtOf(e: RecordedEvent): Date {
  const at = e.metadata.issuedAt;
  const d = typeof at === 'string' ? new Date(at) : e.recordedAt;
  return Number.isNaN(d.getTime()) ? e.recordedAt : d;
}

export function headerOf(
  config: StatementsConfig,
  details: DirectoryDetails,
  number: number | null,
  issuedAt: Date,
): StatementHeader {
  const issuer = {
    ...(config.issuerName ? { name: config.issuerName } : {}),
    ...(config.issuerAddress ? { address: config.issuerAddress } : {}),
    ...(config.issuerTaxId ? { taxId: config.issuerTaxId } : {}),
  };
  const { language, ...recipient } = details;
  return {
    language: language ?? config.language,
    issuer,
    recipient,
    number: number === null ? null : numberText(number),
    issuedAt,
    ...(config.contact ? { contact: config.contact } : {}),
    ...(config.dispute ? { dispute: config.dispute } : {}),
  };
}
