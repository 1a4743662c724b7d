import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import type { Sql } from '../../db/connect';

/** The runs recorded (`recon statements --runs`), a run's note for whoever issued it, its files' hashes. */

export interface IssuedFile {
  readonly name: string;
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
  /** absent for the Payouts index */
  readonly subMerchantId?: string;
  /** finance's alone (a statement's audit file): recorded with the run like the others, never sent to the sub-merchant */
  readonly financeOnly?: true;
}

export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function describeFile(
  file: string,
  subMerchantId?: string,
  opts: { financeOnly?: boolean } = {},
): Promise<IssuedFile> {
  return {
    name: path.basename(file),
    path: file,
    sha256: await fileSha256(file),
    bytes: statSync(file).size,
    ...(subMerchantId ? { subMerchantId } : {}),
    ...(opts.financeOnly ? { financeOnly: true as const } : {}),
  };
}

/** What a run was, in a line for whoever issued it: a month reproduced unchanged, or a correction. */
export function runNote(r: {
  readonly timezone: string;
  readonly position: string;
  readonly reproduces?: Date;
  readonly corrects?: Date;
}): string | undefined {
  const day = (d: Date) => DateTime.fromJSDate(d, { zone: r.timezone }).toISODate();
  if (r.reproduces)
    return `unchanged since the statements issued on ${day(r.reproduces)} (cut at position ${r.position}): the same statements written again, nothing recorded`;
  if (r.corrects)
    return `a correction of the statements issued on ${day(r.corrects)}: each names the statement it corrects and asks only what that one did not`;
  return undefined;
}

export interface StatementRunRow {
  readonly runId: string;
  readonly month: string;
  readonly timezone: string;
  readonly subMerchantId: string | null;
  readonly position: string;
  readonly figuresSha256: string;
  readonly statements: number;
  readonly files: ReadonlyArray<{
    name: string;
    sha256: string;
    bytes: number;
    subMerchantId?: string;
    financeOnly?: true;
  }>;
  readonly eventId: string | null;
  readonly issuedAt: Date;
}

export async function statementRuns(
  sql: Sql,
  opts: { month?: string; limit?: number } = {},
): Promise<StatementRunRow[]> {
  const rows = await sql<
    {
      run_id: string;
      month: string;
      timezone: string;
      sub_merchant_id: string | null;
      position: string;
      figures_sha256: string;
      statements: number;
      files: StatementRunRow['files'];
      event_id: string | null;
      issued_at: Date;
    }[]
  >`
    select run_id, month, timezone, sub_merchant_id, position, figures_sha256, statements, files, event_id, issued_at from statement_runs
    ${opts.month ? sql`where month = ${opts.month}` : sql``} order by issued_at desc limit ${opts.limit ?? 50}`;
  return rows.map((r) => ({
    runId: r.run_id,
    month: r.month,
    timezone: r.timezone,
    subMerchantId: r.sub_merchant_id,
    position: r.position,
    figuresSha256: r.figures_sha256,
    statements: r.statements,
    files: r.files,
    eventId: r.event_id,
    issuedAt: r.issued_at,
  }));
}
