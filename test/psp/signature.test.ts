import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64Url, encodeBase64Url, sign, verify } from '../../src/psp/signature';

// Vectors computed outside this code, with Python's hashlib and base64.urlsafe_b64encode:
//   base64.urlsafe_b64encode(hashlib.sha1((secret + data + secret).encode()).digest())
const VECTORS: Array<{ secret: string; data: string; signature: string }> = [
  { secret: 'sk_test_456', data: 'eyJwYXltZW50X2lkIjoiMSJ9', signature: 'DHUjb9eF98BQnmQnlAS3B7R6BvM=' },
  { secret: 'secret', data: 'eyJhbW91bnQiOjEwLjUsImN1cnJlbmN5IjoiVUFIIn0=', signature: 'lq0t5LLiThjim4wnTshttVgaCNM=' },
  { secret: 'ключ', data: 'e30', signature: '2vrSUUtNSnmAltCxEOr3Mkg7rM8=' },
  { secret: '', data: '', signature: '2jmj7l5rSw0yVb_vlWAYkK_YBwk=' },
  // Standard base64 of this digest is "+A3lHV4Lid/A9NInZCrDr4RArXk=": both substitutions show.
  { secret: 'k', data: 'data17', signature: '-A3lHV4Lid_A9NInZCrDr4RArXk=' },
];

describe('webhook signature (5.4)', () => {
  it.each(VECTORS)('signs $data with secret $secret as the independent vector', ({ secret, data, signature }) => {
    expect(sign(secret, data)).toBe(signature);
    expect(sign(secret, data)).toHaveLength(28);
    expect(verify(secret, data, signature)).toBe(true);
  });

  it('refuses a signature without its padding, a wrong secret, and standard base64', () => {
    const v = VECTORS[4]!;
    expect(verify(v.secret, v.data, v.signature.replace(/=$/, ''))).toBe(false);
    expect(verify('K', v.data, v.signature)).toBe(false);
    expect(verify(v.secret, v.data, '+A3lHV4Lid/A9NInZCrDr4RArXk=')).toBe(false);
    expect(verify(v.secret, v.data, v.signature + '=')).toBe(false);
    expect(verify(v.secret, v.data, '')).toBe(false);
  });

  it('verify(sign()) holds and any altered character fails', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.string({ maxLength: 200 }),
        fc.nat(),
        (secret, data, pos) => {
          const sig = sign(secret, data);
          expect(verify(secret, data, sig)).toBe(true);
          const i = pos % sig.length;
          const replacement = sig[i] === 'A' ? 'B' : 'A';
          const altered = sig.slice(0, i) + replacement + sig.slice(i + 1);
          expect(verify(secret, data, altered)).toBe(false);
          if (data.length > 0) {
            const j = pos % data.length;
            const alteredData = data.slice(0, j) + (data[j] === 'x' ? 'y' : 'x') + data.slice(j + 1);
            expect(verify(secret, alteredData, sig)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  // sign hashes secret + data + secret as one text: the same bytes as hashing the three parts one by one,
  // lone surrogate halves at the joins included (each part's own UTF-8, as the PSP's code would hash them).
  it('hashes the three parts as the PSP does, whatever text they hold', () => {
    const threeParts = (secret: string, data: string) =>
      createHash('sha1')
        .update(secret, 'utf8')
        .update(data, 'utf8')
        .update(secret, 'utf8')
        .digest('base64')
        .replace(/\+/g, '-')
        .replace(/\//g, '_');
    const halves = fc.constantFrom('\ud83d', '\ude00', 'a', '');
    fc.assert(
      fc.property(halves, fc.string({ unit: 'binary', maxLength: 30 }), halves, fc.string(), (a, secret, b, data) => {
        const s = a + secret + b;
        expect(sign(s, data)).toBe(threeParts(s, data));
        expect(sign(s, `\ude00${data}\ud83d`)).toBe(threeParts(s, `\ude00${data}\ud83d`));
      }),
      { numRuns: 500 },
    );
  });
});

describe('base64url data', () => {
  // "{"payment_id": "p-1", "amount": 12.5}" encoded by Python with padding.
  const padded = 'eyJwYXltZW50X2lkIjogInAtMSIsICJhbW91bnQiOiAxMi41fQ==';
  it('decodes padded and unpadded forms to the same bytes', () => {
    expect(decodeBase64Url(padded)?.toString('utf8')).toBe('{"payment_id": "p-1", "amount": 12.5}');
    expect(decodeBase64Url(padded.replace(/=+$/, ''))?.toString('utf8')).toBe('{"payment_id": "p-1", "amount": 12.5}');
  });
  it('refuses what is not base64url', () => {
    expect(decodeBase64Url('ab+c')).toBeNull();
    expect(decodeBase64Url('ab/c')).toBeNull();
    expect(decodeBase64Url('abcde')).toBeNull();
    expect(decodeBase64Url('a b')).toBeNull();
  });
  it('round-trips any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 100 }), (s) => {
        expect(decodeBase64Url(encodeBase64Url(s))?.toString('utf8')).toBe(s);
      }),
    );
  });
});
