import { describe, expect, it } from 'vitest';
import { parseCamt053 } from '../../../src/ingest/bank/camt053';
import { createReadStream } from 'node:fs';
import { createSpool, type SpoolItem } from '../../../src/ingest/bank/spool';
import { fixture } from './support';

/** The spool gives back exactly what the first reading kept, in order: the append reads nothing else. */
describe('bank import spool', () => {
  it('reads back every entry and statement mark as written, amounts exact', async () => {
    const written: SpoolItem[] = [];
    const spool = createSpool();
    try {
      for (const name of ['camt053-v02-batch.xml', 'camt053-v08-prefixed.xml']) {
        for await (const items of parseCamt053(createReadStream(fixture(name)), name)) {
          const kept = items.map(
            (i): SpoolItem =>
              i.kind === 'entry'
                ? { kind: 'entry', statement: i.head.index, entry: { ...i.entry, where: '' } }
                : { kind: 'statement', statement: i.statement.index },
          );
          written.push(...kept);
          await spool.write(kept);
        }
      }
      // an amount beyond a double's exact integers, and empty details
      const first = written.find((i) => i.kind === 'entry');
      if (first?.kind !== 'entry') throw new Error('the fixtures have entries');
      const huge: SpoolItem = {
        kind: 'entry',
        statement: 7,
        entry: { ...first.entry, amount: 99_999_999_999_999_999n, details: [] },
      };
      written.push(huge);
      await spool.write([huge]);
      await spool.end();
      const read: SpoolItem[] = [];
      for await (const items of spool.read()) read.push(...items);
      expect(written.filter((i) => i.kind === 'entry').length).toBeGreaterThan(3);
      expect(read).toEqual(written);
    } finally {
      spool.remove();
    }
  });
});
