import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formOf } from '../../src/sandbox/webhooks';

// The stand-in PSP writes its form bodies without a URLSearchParams per webhook (issue 26): the same text.
describe('webhook form body', () => {
  const viaParams = (data: string, signature: string) => new URLSearchParams({ data, signature }).toString();

  it('is what URLSearchParams writes, for base64url data and a padded signature', () => {
    expect(formOf('eyJhIjoxfQ', 'lq0t5LLiThjim4wnTshttVgaCNM=')).toBe(
      'data=eyJhIjoxfQ&signature=lq0t5LLiThjim4wnTshttVgaCNM%3D',
    );
    const b64url = fc.stringMatching(/^[A-Za-z0-9_-]{0,60}$/);
    fc.assert(
      fc.property(b64url, b64url, fc.constantFrom('', '=', '=='), (data, sig, pad) => {
        expect(formOf(data, sig + pad)).toBe(viaParams(data, sig + pad));
      }),
    );
  });

  it('is what URLSearchParams writes for any other text too', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 }), (data, sig) => {
        expect(formOf(data, sig)).toBe(viaParams(data, sig));
      }),
    );
  });
});
