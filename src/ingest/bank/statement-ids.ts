import { bankAccountStream } from '../../events/bank-events';
import { statementEvent } from './apply';
import type { CheckedFile } from './checked-file';
import type { StoredStatements } from './known-events';

/**
 * A statement id is the bank's name for one statement of one account: recorded once with one content
 * (balances, days, booked entries). The same statement imported again is known; the same id with other
 * content (a corrected statement re-sent under its old id, another statement mislabelled) is refused naming
 * the id, within one import and against what the store holds, before anything is appended.
 */

export interface StatementIds {
  /** problems of the file's statements (each names file, account and statement id); records them if none */
  problems(f: CheckedFile): Promise<string[]>;
}

export function statementIds(stored: StoredStatements | undefined): StatementIds {
  const inImport = new Map<string, { id: string; file: string }>();
  return {
    async problems(f) {
      const out: string[] = [];
      const mine: [string, { id: string; file: string }][] = [];
      for (const c of f.statements) {
        if (c.account === null) continue;
        const s = c.statement;
        const id = statementEvent(f, c).id;
        const key = `${c.account.id}\u0000${s.statementId}`;
        const name = `statement id ${s.statementId} of account ${c.account.id} (${s.where})`;
        const earlier = inImport.get(key);
        if (earlier && earlier.id !== id) {
          out.push(`${f.file}: ${name}: also in ${earlier.file} with other content`);
          continue;
        }
        const recorded = stored ? await stored(bankAccountStream(c.account.id), s.statementId!) : [];
        if (recorded.length > 0 && !recorded.includes(id))
          out.push(
            `${f.file}: ${name}: already recorded with other content (balances, days or entries); a statement id is not reused`,
          );
        mine.push([key, { id, file: f.file }]);
      }
      if (out.length === 0) for (const [k, v] of mine) inImport.set(k, v);
      return out;
    },
  };
}
