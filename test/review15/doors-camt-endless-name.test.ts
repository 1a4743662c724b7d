import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseCamt053 } from '../../src/ingest/bank/camt053';
import { NS } from '../bad-input/bank-files.cases';

/**
 * The camt.053 reader bounded what the XML parser holds of a text, comment or CDATA (65,536 characters), but not
 * of a name: an element or attribute name, a closing tag's name, an entity reference (`&aaaa…`) or a processing
 * instruction's target without its end was held whole, so a file of one endless name grew the import's memory
 * with the file (to the end of a gigabyte file, or out of memory) before it was refused as "unclosed tag". Now
 * such a name is refused as soon as it is longer than the texts' bound, naming the line and element.
 */

const CHUNK = 65_536;
const HEAD = `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="${NS}"><BkToCstmrStmt><GrpHdr>`;

/** A file of `HEAD + opener` and then `unit` for 64 MiB: how many of its chunks were read, and the refusal. */
async function readEndless(opener: string, unit: string) {
  let read = 0;
  const body = (function* () {
    yield Buffer.from(HEAD + opener);
    for (; read < 1024; read++) yield Buffer.from(unit.repeat(CHUNK));
  })();
  const refusal = await (async () => {
    for await (const _ of parseCamt053(Readable.from(body), 'endless.xml'));
  })().then(
    () => null,
    (e: Error) => e.message,
  );
  return { read, refusal };
}

describe('a camt.053 file of one endless name', () => {
  it.each([
    ['an element name', '<'],
    ['an attribute name', '<Id '],
    ['a closing tag', '</'],
    ['an entity reference', '&'],
    ['a processing instruction', '<?'],
  ])('%s is refused within the bound, naming the element, not held to the end of the file', async (_what, opener) => {
    const { read, refusal } = await readEndless(opener, 'a');
    expect(refusal).toMatch(
      /^endless\.xml: line 1, column \d+ \(Document\/BkToCstmrStmt(\/GrpHdr)?\): a name longer than 65536 characters$/,
    );
    // refused after the bound and a chunk or two more, not after reading the whole file
    expect(read).toBeLessThan(4);
  });
});
