import {
  closeSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  openSync,
  rmSync,
  type WriteStream,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { ParsedCharge, ParsedDetail, ParsedEntry } from './types';

/**
 * The booked entries of a checked file, kept by the first reading in a temporary file (one JSON array a
 * line) so that the append reads them back instead of parsing the statement again: the XML (or MT940, CSV)
 * is parsed once. Its file is unlinked as soon as it is open where the system allows it (a kill leaves
 * nothing behind); it holds what the bank file holds, so it lives in a directory of the user's alone.
 */

export type SpoolItem =
  | { readonly kind: 'entry'; readonly statement: number; readonly entry: ParsedEntry }
  | { readonly kind: 'statement'; readonly statement: number };

export interface Spool {
  /** Keeps the items of one chunk of the file; waits while the disk is behind (memory stays flat). */
  write(items: readonly SpoolItem[]): Promise<void>;
  /** Every item written, in order, in groups (after `end`). */
  read(): AsyncIterable<SpoolItem[]>;
  end(): Promise<void>;
  remove(): void;
}

type Row = [kind: 's', statement: number] | [kind: 'e', statement: number, ...fields: unknown[]];

function rowOf(item: SpoolItem): Row {
  if (item.kind === 'statement') return ['s', item.statement];
  const e = item.entry;
  return [
    'e',
    item.statement,
    e.amount.toString(),
    e.direction,
    e.currency,
    e.status,
    e.bookingDate,
    e.valueDate,
    e.bankRef,
    e.isReversal,
    e.transactionCode,
    e.info,
    e.details.map((d) => [
      d.amount === null ? null : d.amount.toString(),
      d.direction,
      d.endToEndId,
      d.remittance,
      d.counterpartyName,
      d.counterpartyAccount,
      d.isReturn,
      d.transactionCode,
      d.bankRef,
      ...chargeRows(d.charges),
    ]),
    ...chargeRows(e.charges),
  ];
}

/** Charges, when there are any (an entry without keeps its row as before): `[amount, currency, direction, included]`. */
const chargeRows = (charges: readonly ParsedCharge[] | undefined): unknown[][] =>
  charges?.length ? [charges.map((c) => [c.amount.toString(), c.currency, c.direction, c.included])] : [];

const chargesOf = (rows: unknown): { charges?: ParsedCharge[] } =>
  rows === undefined
    ? {}
    : {
        charges: (rows as [string, string | null, ParsedCharge['direction'], boolean | null][]).map((c) => ({
          amount: BigInt(c[0]),
          currency: c[1],
          direction: c[2],
          included: c[3],
        })),
      };

type DetailRow = [string | null, ...unknown[]];

function itemOf(row: Row): SpoolItem {
  if (row[0] === 's') return { kind: 'statement', statement: row[1] };
  const [, statement, amount, direction, currency, status, bookingDate, valueDate, bankRef, isReversal, code, info] =
    row;
  const details = (row[12] as DetailRow[]).map(
    (d): ParsedDetail => ({
      amount: d[0] === null ? null : BigInt(d[0]),
      direction: d[1] as ParsedDetail['direction'],
      endToEndId: d[2] as string | null,
      remittance: d[3] as string | null,
      counterpartyName: d[4] as string | null,
      counterpartyAccount: d[5] as string | null,
      isReturn: d[6] as boolean,
      transactionCode: d[7] as string | null,
      bankRef: d[8] as string | null,
      ...chargesOf(d[9]),
    }),
  );
  const entry: ParsedEntry = {
    amount: BigInt(amount as string),
    direction: direction as ParsedEntry['direction'],
    currency: currency as string | null,
    status: status as ParsedEntry['status'],
    bookingDate: bookingDate as string | null,
    valueDate: valueDate as string | null,
    bankRef: bankRef as string | null,
    isReversal: isReversal as boolean,
    transactionCode: code as string | null,
    details,
    info: info as string | null,
    ...chargesOf(row[13]),
    where: '',
  };
  return { kind: 'entry', statement, entry };
}

export function createSpool(): Spool {
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bank-spool-'));
  const file = path.join(dir, 'entries.ndjson');
  const fd = openSync(file, 'w+', 0o600);
  let unlinked = false;
  try {
    rmSync(dir, { recursive: true, force: true });
    unlinked = true;
  } catch {
    // a system that cannot remove an open file: removed by remove()
  }
  const out: WriteStream = createWriteStream('', { fd, autoClose: false, highWaterMark: 256 * 1024 });
  let ended = false;
  return {
    async write(items) {
      if (items.length === 0) return;
      let text = '';
      for (const item of items) text += `${JSON.stringify(rowOf(item))}\n`;
      if (!out.write(text)) await once(out, 'drain');
    },
    async end() {
      if (ended) return;
      ended = true;
      out.end();
      await finished(out);
    },
    async *read() {
      const input = createReadStream('', { fd, start: 0, autoClose: false, highWaterMark: 256 * 1024 });
      input.setEncoding('utf8');
      let rest = '';
      for await (const chunk of input) {
        const text = rest + (chunk as string);
        const last = text.lastIndexOf('\n');
        rest = text.slice(last + 1);
        if (last < 0) continue;
        const lines = text.slice(0, last).split('\n');
        yield lines.map((l) => itemOf(JSON.parse(l) as Row));
      }
      if (rest !== '') yield [itemOf(JSON.parse(rest) as Row)];
    },
    remove() {
      if (!ended) out.destroy();
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      if (!unlinked) rmSync(dir, { recursive: true, force: true });
    },
  };
}
