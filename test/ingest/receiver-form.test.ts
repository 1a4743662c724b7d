import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { webhookForm } from '../../src/http/receiver';

// The receiver reads its two form fields without a URLSearchParams per webhook (issue 26): the same
// values, each as often as given, for any body its form check lets through.
const viaParams = (text: string) => {
  const form = new URLSearchParams(text);
  return { datas: form.getAll('data'), signatures: form.getAll('signature') };
};

describe('webhook form fields', () => {
  it('reads a PSP body and its padded signature', () => {
    expect(webhookForm('data=eyJhIjoxfQ&signature=lq0t5LLiThjim4wnTshttVgaCNM%3D')).toEqual({
      datas: ['eyJhIjoxfQ'],
      signatures: ['lq0t5LLiThjim4wnTshttVgaCNM='],
    });
  });

  it('reads repeated, empty, unnamed and encoded fields as URLSearchParams does', () => {
    for (const text of [
      '',
      '&&',
      'data',
      'data=&data=x',
      '=x&data=1=2',
      'dat%61=a+b%2B&sign%61ture=%3D%3D',
      'data=%E2%82%AC&signature=%',
      'data=%ED%A0%80&signature=x',
      'data=%C3&x=%zz',
      'x=%zz&data=y',
      'signature=a&signature=b&data=c',
    ])
      expect(webhookForm(text), text).toEqual(viaParams(text));
  });

  it('agrees with URLSearchParams on any body of form characters', () => {
    const piece = fc.oneof(
      fc.constantFrom('data', 'signature', 'dat%61', '=', '&', '+', '%', '%3D', '%2B', '%E2%82%AC', '%C3', '%ED%A0%80'),
      fc.stringMatching(/^[A-Za-z0-9%&=+._~*\-!'()]{0,8}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(webhookForm(text)).toEqual(viaParams(text));
      }),
      { numRuns: 2000 },
    );
  });
});
