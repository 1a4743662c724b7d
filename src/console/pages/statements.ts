import { createReadStream, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import type { Sql } from '../../db/connect';
import { type StatementRunRow, statementRuns } from '../../export/statements/runs';
import { type Html, html } from '../html';
import { when } from '../i18n';
import { type View, table } from '../layout';

/**
 * Statements: every run recorded (statement_runs) by month, newest first, with its files to download. A file
 * is served only when a recorded run names it and it is a plain file name in the statements directory
 * (RECON_OUT_DIR): a name from a request never becomes a path by itself.
 */

export const fileLink = (name: string): Html =>
  html`<a href="/console/statements/file?name=${encodeURIComponent(name)}" download hx-boost="false">${name}</a>`;

export function statementsPage(v: View, runs: readonly StatementRunRow[]): Html {
  const w = v.w;
  const rows = runs.map(
    (r) => html`<tr><td>${r.month}</td><td>${when(r.issuedAt, v.zone, v.lang)}</td><td class="num">${r.statements}</td>
<td><ul class="files">${r.files.map((f) => html`<li>${fileLink(f.name)}</li>`)}</ul></td></tr>`,
  );
  return table(w.statementRuns, [w.month, w.issued, w.count, w.files], rows, w.noRows);
}

const TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The path of a recorded statement file, or null (unknown name, not a plain name, not on disk). */
export async function statementFile(sql: Sql, outDir: string, name: string): Promise<string | null> {
  if (name !== path.basename(name) || name.startsWith('.') || !(path.extname(name) in TYPES)) return null;
  // no file we write has a control character, and PostgreSQL takes no NUL in a text (the query failed: a 500)
  if (/[\u0000-\u001f\u007f]/.test(name)) return null;
  const [known] = await sql`
    select 1 from statement_runs, jsonb_array_elements(files) f where f->>'name' = ${name} limit 1`;
  if (!known) return null;
  const file = path.join(outDir, name);
  try {
    return statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

export function sendFile(res: ServerResponse, file: string): void {
  const name = path.basename(file);
  res.writeHead(200, {
    'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream',
    'content-length': statSync(file).size,
    // the name is ours (checked above) but quoted per RFC 6266 with its UTF-8 form beside
    'content-disposition': `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  createReadStream(file).pipe(res);
}

export { statementRuns };
