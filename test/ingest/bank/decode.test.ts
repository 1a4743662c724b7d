import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bankConfigSchema } from '../../../src/config/bank';
import { csvMappingSchema } from '../../../src/ingest/bank/csv';
import { decodedText, UndecodableBytes, UnknownEncoding } from '../../../src/ingest/bank/decode';
import { LineTooLong, linesOf } from '../../../src/ingest/bank/lines';

/**
 * The decoding of bank files (src/ingest/bank/decode.ts) and their cutting into lines (lines.ts): a file read in
 * chunks of any size gives the same text and lines as read whole, whatever a chunk's end cuts (a UTF-8 sequence,
 * a CRLF); bytes that are not UTF-8 are refused after the valid text before them, never replaced.
 */

async function* chunks(buf: Buffer, cuts: readonly number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    if (c <= at || c >= buf.length) continue;
    yield buf.subarray(at, c);
    at = c;
  }
  yield buf.subarray(at);
}

async function decodeAll(buf: Buffer, cuts: readonly number[], encoding = 'utf-8') {
  let text = '';
  try {
    for await (const t of decodedText(chunks(buf, cuts), encoding)) text += t;
    return { text, error: null };
  } catch (e) {
    return { text, error: e as Error };
  }
}

const textArb = fc.string({
  unit: fc.constantFrom('a', 'é', 'Ж', '€', '😀', '\n', '\r', '\r\n', ' ', '\u202e'),
  maxLength: 60,
});

describe('decodedText', () => {
  it('UTF-8 cut anywhere reads as the whole text (BOM removed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        fc.array(fc.nat({ max: 250 }), { maxLength: 8 }),
        fc.boolean(),
        async (s, cuts, bom) => {
          const buf = Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), Buffer.from(s)]);
          const r = await decodeAll(buf, cuts);
          expect(r.error).toBeNull();
          expect(r.text).toBe(s);
        },
      ),
      { numRuns: 300, seed: 23 },
    );
  });

  it('bytes that are not UTF-8: the valid text before them, then the refusal naming them', async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        textArb,
        fc.constantFrom([0xe9], [0xff], [0xed, 0xa0, 0x80], [0xc3]),
        fc.array(fc.nat({ max: 250 }), { maxLength: 6 }),
        async (a, b, bad, cuts) => {
          const buf = Buffer.concat([Buffer.from(a), Buffer.from(bad), Buffer.from(`x${b}`)]);
          const r = await decodeAll(buf, cuts);
          expect(r.error).toBeInstanceOf(UndecodableBytes);
          expect(r.error!.message).toMatch(
            new RegExp(`^bytes that are not UTF-8 \\(0x${bad[0]!.toString(16).toUpperCase()}`),
          );
          expect(r.text).toBe(a);
        },
      ),
      { numRuns: 200, seed: 2323 },
    );
  });

  it('a sequence cut by the end of the file is refused, not dropped', async () => {
    const r = await decodeAll(Buffer.from([0x61, 0xe2, 0x82]), []);
    expect(r.text).toBe('a');
    expect(r.error!.message).toBe('bytes that are not UTF-8 at the end of the file (0xE2 0x82)');
  });

  it('a declared single-byte encoding decodes every byte; an unknown one is refused', async () => {
    const latin = Buffer.from('Grüße, Müller', 'latin1');
    expect((await decodeAll(latin, [3, 7], 'iso-8859-1')).text).toBe('Grüße, Müller');
    expect((await decodeAll(Buffer.from([0x80]), [], 'windows-1252')).text).toBe('€');
    expect((await decodeAll(Buffer.from([0xcf, 0xf0, 0xe8]), [1], 'windows-1251')).text).toBe('При');
    const unknown = await decodeAll(latin, [], 'x-evil');
    expect(unknown.error).toBeInstanceOf(UnknownEncoding);
  });

  it('an XML file is read as its BOM or declaration says', async () => {
    const decl = Buffer.from('<?xml version="1.0" encoding="windows-1252"?><a>\u0080</a>', 'latin1');
    expect((await decodeAll(decl, [5, 20], 'xml')).text).toBe('<?xml version="1.0" encoding="windows-1252"?><a>€</a>');
    const utf16 = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<a>Ж</a>', 'utf16le').swap16()]);
    expect((await decodeAll(utf16, [3], 'xml')).text).toBe('<a>Ж</a>');
    const none = await decodeAll(Buffer.from('<a>\u00e9</a>', 'latin1'), [], 'xml');
    expect(none.error).toBeInstanceOf(UndecodableBytes);
  });
});

describe('linesOf', () => {
  // lines are not empty: a CR break then an empty line ended by LF would be one CRLF
  it('gives the lines of LF, CRLF and CR, wherever the chunks end', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'Ж'), minLength: 1, maxLength: 10 }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 8, maxLength: 8 }),
        fc.array(fc.nat({ max: 100 }), { maxLength: 6 }),
        async (lines, breaks, cuts) => {
          const text = lines.map((l, i) => l + breaks[i]).join('');
          const pieces: string[] = [];
          let at = 0;
          for (const c of [...cuts].sort((a, b) => a - b)) {
            if (c <= at || c >= text.length) continue;
            pieces.push(text.slice(at, c));
            at = c;
          }
          pieces.push(text.slice(at));
          const got: string[] = [];
          for await (const l of linesOf(
            (async function* () {
              yield* pieces;
            })(),
            100,
          ))
            got.push(l);
          expect(got).toEqual(lines);
        },
      ),
      { numRuns: 300, seed: 940 },
    );
  });

  it('refuses a line longer than the limit before holding it whole', async () => {
    async function* endless() {
      for (let i = 0; i < 1000; i++) yield 'x'.repeat(1000);
    }
    const got: string[] = [];
    await expect(
      (async () => {
        for await (const l of linesOf(endless(), 4096)) got.push(l);
      })(),
    ).rejects.toBeInstanceOf(LineTooLong);
    expect(got).toEqual([]);
  });
});

describe('configured encodings', () => {
  it('bank.encoding and a CSV mapping take only an encoding recon can decode', () => {
    expect(bankConfigSchema.safeParse({ encoding: 'windows-1252' }).success).toBe(true);
    const bad = bankConfigSchema.safeParse({ encoding: 'x-evil' });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.message).toMatch(/not an encoding recon can decode/);
    const mapping = { account: 'X', currency: 'EUR', columns: { bookingDate: 'a', amount: 'b', balance: 'c' } };
    expect(csvMappingSchema.safeParse({ ...mapping, encoding: 'iso-8859-1' }).success).toBe(true);
    expect(csvMappingSchema.safeParse({ ...mapping, encoding: 'ebcdic-evil' }).success).toBe(false);
  });
});
