import {
  BankEntryBooked,
  BankEntryForUnknownAccount,
  BankStatementImported,
  bankAccountStream,
  unknownBankAccountStream,
} from '../../events/bank-events';
import { newEvent } from '../../events/catalog';
import { StoreError } from '../../store/errors';
import type { EventStore, NewEvent } from '../../store/types';
import type { CheckedFile } from './checked-file';
import { entryEvents, occurrenceCounter, type Occurrences } from './entry-events';
import type { KnownEvents } from './known-events';
import { parserFor } from './open-file';
import type { SpoolItem } from './spool';

/**
 * The append of a checked file, from the entries its first reading spooled: its events in batches, each
 * batch one appendMany (one transaction on PostgreSQL). Every id is deterministic and what the store
 * already holds is left out, so a batch repeated after a crash adds nothing; a statement's own event
 * follows all its entries, so a statement that is recorded is recorded whole.
 */

export interface FileOutcome {
  readonly file: string;
  statements: number;
  statementsKnown: number;
  entries: number;
  entriesKnown: number;
  pending: number;
  readonly unknown: { account: string; statementId: string; entries: number }[];
}

const BATCH = 2000;

export async function applyFile(
  store: EventStore,
  known: KnownEvents,
  f: CheckedFile,
  opts: { batchSize?: number; signal?: AbortSignal } = {},
): Promise<FileOutcome> {
  const outcome: FileOutcome = {
    file: f.file,
    statements: 0,
    statementsKnown: 0,
    entries: 0,
    entriesKnown: 0,
    pending: 0,
    unknown: [],
  };
  let pending = new Map<string, NewEvent[]>();
  let size = 0;
  const add = (stream: string, e: NewEvent) => {
    let list = pending.get(stream);
    if (!list) pending.set(stream, (list = []));
    list.push(e);
    size++;
  };
  // one batch is appended while the next is read: the file and the database work at the same time, and
  // batches still reach the store in the file's order (each waits for the one before)
  let inFlight: Promise<void> = Promise.resolve();
  let failure: unknown;
  const mode: AppendMode = { lookFirst: false };
  const flush = async () => {
    await inFlight;
    if (failure !== undefined) throw failure;
    if (size === 0) return;
    opts.signal?.throwIfAborted();
    const batch = pending;
    pending = new Map();
    size = 0;
    inFlight = appendBatch(store, known, batch, mode).then(
      (counts) => {
        outcome.entries += counts.entries;
        outcome.entriesKnown += counts.entriesKnown;
        outcome.statements += counts.statements;
        outcome.statementsKnown += counts.statementsKnown;
      },
      (e: unknown) => {
        failure = e;
      },
    );
  };
  const occurrences = new Map<number, Occurrences>();
  for await (const items of itemsOf(f)) {
    for (const item of items) {
      if (item.kind === 'entry') {
        const c = f.statements[item.statement]!;
        if (item.entry.status !== 'booked' || c.account === null) continue;
        let occ = occurrences.get(item.statement);
        if (!occ) occurrences.set(item.statement, (occ = occurrenceCounter(c.dayOrdered)));
        for (const e of entryEvents(c.account.id, c.statement, item.entry, occ))
          add(bankAccountStream(c.account.id), e);
        if (size >= (opts.batchSize ?? BATCH)) await flush();
        continue;
      }
      const c = f.statements[item.statement]!;
      occurrences.delete(item.statement);
      outcome.pending += c.pending;
      const s = c.statement;
      if (c.account === null) {
        outcome.unknown.push({ account: s.account!, statementId: s.statementId!, entries: c.booked });
        add(unknownBankAccountStream, unknownEvent(f, c));
      } else {
        add(bankAccountStream(c.account.id), statementEvent(f, c));
      }
    }
  }
  await flush();
  await inFlight;
  if (failure !== undefined) throw failure;
  return outcome;
}

/** The spooled entries, or the file read again when it was checked without a spool. */
async function* itemsOf(f: CheckedFile): AsyncIterable<readonly SpoolItem[]> {
  if (f.spool) {
    yield* f.spool.read();
    return;
  }
  for await (const items of parserFor(f.file, f.format, f.mapping, f.encoding))
    yield items.map(
      (i): SpoolItem =>
        i.kind === 'entry'
          ? { kind: 'entry', statement: i.head.index, entry: i.entry }
          : { kind: 'statement', statement: i.statement.index },
    );
}

export function statementEvent(f: CheckedFile, c: CheckedFile['statements'][number]): NewEvent {
  const s = c.statement;
  return newEvent(
    BankStatementImported,
    {
      accountId: c.account!.id,
      currency: s.currency!,
      statementId: s.statementId!,
      format: f.format,
      openingDate: s.opening!.date,
      closingDate: s.closing!.date,
      openingBalance: s.opening!.amount.toString(),
      closingBalance: s.closing!.amount.toString(),
      entries: c.booked,
      fileSha256: f.sha256,
    },
    {
      // the statement itself, not the file that carried it: the same statement in another file is known
      idContent: {
        account: c.account!.id,
        statementId: s.statementId,
        opening: [s.opening!.date, s.opening!.amount.toString()],
        closing: [s.closing!.date, s.closing!.amount.toString()],
        entries: c.booked,
      },
    },
  );
}

export function unknownEvent(f: CheckedFile, c: CheckedFile['statements'][number]): NewEvent {
  const s = c.statement;
  return newEvent(
    BankEntryForUnknownAccount,
    {
      account: s.account!,
      currency: s.currency,
      statementId: s.statementId,
      file: f.file,
      entries: c.booked,
      fileSha256: f.sha256,
    },
    { idContent: { account: s.account, statementId: s.statementId, fileSha256: f.sha256 } },
  );
}

interface BatchCounts {
  entries: number;
  entriesKnown: number;
  statements: number;
  statementsKnown: number;
}

/**
 * `lookFirst`: look up which ids the store holds before appending. Needed only when an entry is already
 * stored from another statement (an overlap: same id, other content, which the store refuses whole); a
 * batch of entries is otherwise appended as it is, the store itself leaving out the ids it holds with
 * equal content (a re-import). Set after a refusal, cleared by a batch that finds nothing stored.
 */
interface AppendMode {
  lookFirst: boolean;
}

async function appendBatch(
  store: EventStore,
  known: KnownEvents,
  batch: ReadonlyMap<string, NewEvent[]>,
  mode: AppendMode,
): Promise<BatchCounts> {
  const onlyEntries = [...batch.values()].every((events) => events.every((e) => e.type === BankEntryBooked.type));
  if (onlyEntries && !mode.lookFirst) {
    const requests = [...batch].map(([stream, events]) => ({ stream, events }));
    try {
      const results = await store.appendMany(requests);
      const counts: BatchCounts = { entries: 0, entriesKnown: 0, statements: 0, statementsKnown: 0 };
      for (const [i, r] of results.entries()) {
        counts.entries += r.appended;
        counts.entriesKnown += requests[i]!.events.length - r.appended;
      }
      return counts;
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 'EVENT_ID_CONFLICT')) throw e;
      mode.lookFirst = true;
    }
  }
  const counts = await appendLookedUp(store, known, batch);
  mode.lookFirst = counts.entriesKnown + counts.statementsKnown > 0;
  return counts;
}

async function appendLookedUp(
  store: EventStore,
  known: KnownEvents,
  batch: ReadonlyMap<string, NewEvent[]>,
): Promise<BatchCounts> {
  for (let attempt = 0; ; attempt++) {
    const counts: BatchCounts = { entries: 0, entriesKnown: 0, statements: 0, statementsKnown: 0 };
    const requests: { stream: string; events: NewEvent[] }[] = [];
    for (const [stream, events] of batch) {
      const have = await known(
        stream,
        events.map((e) => e.id),
      );
      const seen = new Set<string>();
      const fresh: NewEvent[] = [];
      for (const e of events) {
        const isEntry = e.type === BankEntryBooked.type;
        const isStatement = e.type === BankStatementImported.type;
        const isKnown = have.has(e.id) || seen.has(e.id);
        seen.add(e.id);
        if (isKnown) {
          if (isEntry) counts.entriesKnown++;
          else if (isStatement) counts.statementsKnown++;
          continue;
        }
        if (isEntry) counts.entries++;
        else if (isStatement) counts.statements++;
        fresh.push(e);
      }
      if (fresh.length > 0) requests.push({ stream, events: fresh });
    }
    try {
      if (requests.length > 0) await store.appendMany(requests);
      return counts;
    } catch (e) {
      // another import appended one of these ids since they were looked up: look again, once
      if (attempt === 0 && e instanceof StoreError && e.code === 'EVENT_ID_CONFLICT') continue;
      throw e;
    }
  }
}
