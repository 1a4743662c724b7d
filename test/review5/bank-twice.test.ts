import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { bankDoors } from '../bad-input/bank-harness';
import { camt, csv, csvMapping, mt940 } from '../bad-input/bank-files.cases';
import { tempFile } from '../ingest/bank/support';

/**
 * Review 5: a bank statement imported twice (under another name, with a BOM, in CRLF, twice in one command,
 * by two imports at once) books its entries once.
 */

const t = useTestStore();

describe('review5: a statement imported twice books once', () => {
  it('another name, a BOM and CRLF, twice in one command: nothing more', async () => {
    const { importFiles, eventCount } = bankDoors(t);
    const text = camt('R5-TWICE');
    await importFiles([tempFile('r5-a.xml', text)]);
    const after = await eventCount();
    await importFiles([tempFile('r5-b-renamed.xml', text)]);
    await importFiles([tempFile('r5-c.xml', `\ufeff${text.replace(/\n/g, '\r\n')}`)]);
    expect(await eventCount()).toBe(after);
    const m = mt940('R5-TWICE-MT');
    await importFiles([tempFile('r5-d.sta', m), tempFile('r5-e.sta', m)]).catch(() => undefined);
    const afterMt = await eventCount();
    await importFiles([tempFile('r5-f.sta', `\ufeff${m}`)]);
    expect(await eventCount()).toBe(afterMt);
  });

  it('two imports of one file at once: one books it, the other books nothing more (or is refused)', async () => {
    const { importFiles, eventCount } = bankDoors(t);
    const before = await eventCount();
    const text = camt('R5-CONCURRENT');
    const results = await Promise.allSettled([
      importFiles([tempFile('r5-x.xml', text)]),
      importFiles([tempFile('r5-y.xml', text)]),
    ]);
    const once = await eventCount();
    // a third import alone: what one import of the file books
    for (const r of results) if (r.status === 'rejected') console.log('concurrent import refused:', String(r.reason));
    expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
    expect(once - before).toBe(3); // two entries and the statement
  });

  it('a CSV export imported again with its rows newest first books nothing more', async () => {
    const { importFiles, eventCount } = bankDoors(t);
    const text = csv('R5-CSV');
    await importFiles([tempFile('r5-csv1.csv', text)], { mapping: csvMapping('R5-CSV') });
    const after = await eventCount();
    const [h, a, b] = text.trim().split('\n');
    await importFiles([tempFile('r5-csv2.csv', `${h}\n${b}\n${a}\n`)], {
      mapping: csvMapping('R5-CSV', { newestFirst: true }),
    }).catch((e) => console.log('reversed:', String(e)));
    expect(await eventCount()).toBe(after);
  });
});
