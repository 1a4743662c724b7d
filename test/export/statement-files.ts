import { readdirSync } from 'node:fs';
import { statementFileName } from '../../src/export/statements/workbooks';

/**
 * The statement file a run wrote for a sub-merchant, found by its id and month: its name carries a slug of the
 * sub-merchant's name between them (statementFileName), which the tests need not repeat.
 */
export function statementFile(
  dir: string,
  id: string,
  month: string,
  provisional = false,
  file: 'xlsx' | 'pdf' | 'audit' = 'xlsx',
): string {
  const bare = statementFileName(id, month, provisional);
  const tail = bare.slice(bare.length - `${provisional ? `${month}-PROVISIONAL` : month}.xlsx`.length - 1, -5);
  const head = bare.slice(0, bare.length - tail.length - 5);
  const ending = file === 'audit' ? '-audit.xlsx' : `.${file}`;
  const found = readdirSync(dir).filter(
    (f) =>
      f.startsWith(head) &&
      f.endsWith(`${tail}${ending}`) &&
      /^(-[a-z0-9-]+)?$/.test(f.slice(head.length, -tail.length - ending.length)),
  );
  if (found.length !== 1) throw new Error(`statement file of ${id} ${month} in ${dir}: ${found.join(', ') || 'none'}`);
  return found[0]!;
}
