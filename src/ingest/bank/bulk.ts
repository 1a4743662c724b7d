import { existsSync, statSync } from 'node:fs';
import type { BankAccount } from '../../config/bank';
import { ReconError } from '../../errors';
import { bankAccountStream, unknownBankAccountStream } from '../../events/bank-events';
import type { BulkEvent, EventStore } from '../../store/types';
import type { FileOutcome } from './apply';
import { statementEvent, unknownEvent } from './apply';
import { type CheckedItem, type CheckProgress, checkedItems, newCheckProgress, type StatementCheck } from './check';
import type { BankImportOptions, CheckedFile } from './checked-file';
import { detectFormat } from './detect';
import { entryEvents, type Occurrences, occurrenceCounter } from './entry-events';
import type { StoredStatements } from './known-events';
import { fileSha256 } from './open-file';
import { type StatementIds, statementIds } from './statement-ids';

/**
 * The import as one bulk append (EventStore.appendBulk): the events are built and streamed to the store
 * while the files are read and checked the first and only time; a problem in any file makes the bulk
 * throw, so nothing of the import is written. Counts per file come back by label.
 *
 * Two cases it leaves to the batched import (src/ingest/bank/apply.ts), by throwing NotForBulk before
 * anything is written: a statement whose booking days come back after another day (the occurrence counts
 * of a finished day are dropped to keep memory flat, and are then needed again), and an entry stored from
 * an earlier, overlapping statement (same id, other content: the store refuses the bulk).
 */

/** Not an error a person sees: the import catches it and takes the batched path. */
export class NotForBulk extends ReconError {
  readonly code = 'BANK_IMPORT_NOT_FOR_BULK';
  readonly kind = 'internal';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'NotForBulk';
  }
}

/** Refusal of the import's files, thrown from inside the bulk so that nothing of it is written. */
export class FilesRefused extends ReconError {
  readonly code = 'BANK_FILES_REFUSED';
  readonly kind = 'data';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'FilesRefused';
  }
}

const label = (file: number, kind: 'entry' | 'statement' | 'unknown') => `${file}:${kind}`;

export async function importAsBulk(
  store: EventStore,
  files: readonly string[],
  opts: BankImportOptions,
  stored?: StoredStatements,
): Promise<FileOutcome[]> {
  const outcomes: FileOutcome[] = [];
  const result = await store.appendBulk(eventsOf(files, opts, outcomes, statementIds(stored)));
  outcomes.forEach((o, i) => {
    const entries = result.byLabel.get(label(i, 'entry'));
    const statements = result.byLabel.get(label(i, 'statement'));
    o.entries = entries?.appended ?? 0;
    o.entriesKnown = entries?.duplicates ?? 0;
    o.statements = statements?.appended ?? 0;
    o.statementsKnown = statements?.duplicates ?? 0;
  });
  return outcomes;
}

/** Booking days of a statement as they come: a day that comes back after another cannot be counted. */
interface DayRun {
  readonly occurrences: Occurrences;
  day: string | null;
  readonly done: Set<string>;
  readonly statementId: string;
  readonly account: string;
  readonly stream: string;
  /** a statement of a configured account is refused unless it is in the account's currency */
  readonly statement: { readonly statementId: string; readonly currency: string };
}

async function* eventsOf(
  files: readonly string[],
  opts: BankImportOptions,
  outcomes: FileOutcome[],
  ids: StatementIds,
): AsyncGenerator<BulkEvent[]> {
  const problems: string[] = [];
  for (const [i, file] of files.entries()) {
    opts.signal?.throwIfAborted();
    outcomes.push({ file, statements: 0, statementsKnown: 0, entries: 0, entriesKnown: 0, pending: 0, unknown: [] });
    if (!existsSync(file) || !statSync(file).isFile()) {
      problems.push(`${file}: no such file`);
      continue;
    }
    const format = opts.format ?? detectFormat(file);
    const progress = newCheckProgress();
    const hashing = fileSha256(file);
    hashing.catch(() => {});
    const reading: FileReading = {
      file,
      runs: new Map(),
      byId: new Map(opts.accounts.map((a) => [a.id, a])),
      entryLabel: label(i, 'entry'),
      progress,
    };
    for await (const items of checkedItems(file, format, opts.mapping, opts.accounts, progress, opts.encoding)) {
      if (problems.length > 0) continue;
      opts.signal?.throwIfAborted();
      const batch = eventsOfItems(reading, items);
      if (batch.length > 0) yield batch;
    }
    problems.push(...progress.problems);
    if (problems.length > 0) continue;
    // a statement's own event after every entry of its file: it records the file's sha-256
    const f: CheckedFile = {
      file,
      format,
      mapping: opts.mapping,
      encoding: opts.encoding,
      sha256: await hashing,
      statements: progress.statements,
      spool: null,
    };
    // a statement id recorded with other content: the bulk throws below, nothing of it is written
    problems.push(...(await ids.problems(f)));
    if (problems.length > 0) continue;
    yield statementEventsOf(f, progress.statements, outcomes[i]!, i);
  }
  if (problems.length > 0) throw new FilesRefused(problems);
}

/** One file as the bulk reads it: the statements under way, the accounts, the label of its entries. */
interface FileReading {
  readonly file: string;
  readonly runs: Map<number, DayRun>;
  readonly byId: ReadonlyMap<string, BankAccount>;
  readonly entryLabel: string;
  readonly progress: CheckProgress;
}

/** The entries' events of one group of checked items; a statement's end checks what its entries were booked with. */
function eventsOfItems(r: FileReading, items: readonly CheckedItem[]): BulkEvent[] {
  const batch: BulkEvent[] = [];
  for (const item of items) {
    if (item.kind === 'statement') {
      statementEnded(r, item.statement);
      continue;
    }
    const account = item.head.account === null ? undefined : r.byId.get(item.head.account);
    if (!account) continue;
    const run = dayRunOf(r, item, account);
    for (const event of entryEvents(account.id, run.statement, item.entry, run.occurrences))
      batch.push({ stream: run.stream, event, label: r.entryLabel });
  }
  return batch;
}

function statementEnded(r: FileReading, index: number): void {
  // the entries were booked with what the head said then: the same as the whole statement says
  const run = r.runs.get(index);
  const c = endOf(r.progress.statements, index);
  const s = c.statement;
  if (run && (run.statementId !== s.statementId || run.account !== s.account))
    throw new NotForBulk(`${r.file}: statement ${s.statementId} names its id or account after its entries`);
  // every booked entry of a configured account's statement went into the bulk (none read before the
  // account was known): the count the statement records is the count booked
  if (!run && c.account !== null && c.booked > 0)
    throw new NotForBulk(`${r.file}: statement ${s.statementId} names its account after its entries`);
  r.runs.delete(index);
}

/** The statement's run of booking days, the entry's day entered (a day that comes back is not for the bulk). */
function dayRunOf(r: FileReading, item: CheckedItem & { kind: 'entry' }, account: BankAccount): DayRun {
  let run = r.runs.get(item.statement);
  if (!run) {
    if (item.head.statementId === null)
      throw new NotForBulk(`${r.file}: statement ${item.statement + 1} has no id before its entries`);
    run = {
      occurrences: occurrenceCounter(true),
      day: null,
      done: new Set(),
      statementId: item.head.statementId,
      account: account.id,
      stream: bankAccountStream(account.id),
      statement: { statementId: item.head.statementId, currency: account.currency },
    };
    r.runs.set(item.statement, run);
  }
  const day = item.entry.bookingDate!;
  if (day !== run.day) {
    if (run.done.has(day)) throw new NotForBulk(`${r.file}: booking day ${day} comes back after another day`);
    if (run.day !== null) run.done.add(run.day);
    run.day = day;
  }
  return run;
}

/** Each statement's own event (or its unknown account's), counted in the file's outcome. */
function statementEventsOf(
  f: CheckedFile,
  statements: readonly StatementCheck[],
  outcome: FileOutcome,
  i: number,
): BulkEvent[] {
  const ends: BulkEvent[] = [];
  for (const c of statements) {
    outcome.pending += c.pending;
    if (c.account === null) {
      const s = c.statement;
      outcome.unknown.push({ account: s.account!, statementId: s.statementId!, entries: c.booked });
      ends.push({ stream: unknownBankAccountStream, event: unknownEvent(f, c), label: label(i, 'unknown') });
    } else {
      ends.push({ stream: bankAccountStream(c.account.id), event: statementEvent(f, c), label: label(i, 'statement') });
    }
  }
  return ends;
}

/** The check of statement `index`, among the last ones ended. */
function endOf(statements: readonly StatementCheck[], index: number): StatementCheck {
  for (let k = statements.length - 1; k >= 0; k--) if (statements[k]!.statement.index === index) return statements[k]!;
  throw new Error(`statement ${index} ended without its check`);
}
