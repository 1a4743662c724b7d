import { initialLatin, innerLatin, UKRAINIAN_LATIN } from '../../ukrainian-latin';

/**
 * A readable file-name part from a sub-merchant's name: Ukrainian transliterated by the national rules
 * (Cabinet of Ministers resolution 55 of 2010, the one passports use), other accents dropped, everything
 * else a hyphen. It depends on the name alone, so the same name gives the same file every month.
 */

// the national table's forms inside a word; apostrophes are not written
const UK: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.keys(UKRAINIAN_LATIN).map((c) => [c, innerLatin(c)!])),
  '’': '',
  "'": '',
  ʼ: '',
};

// at the start of a word these letters are written as in English (є → ye, ї → yi, й → y, ю → yu, я → ya); ё, not
// Ukrainian, keeps its inner form in a file name, as it always had
const UK_INITIAL: Readonly<Record<string, string>> = Object.fromEntries(
  ['є', 'ї', 'й', 'ю', 'я'].map((c) => [c, initialLatin(c)!]),
);

const MAX = 40;

export function slugOf(name: string): string {
  const lower = name.normalize('NFC').toLowerCase();
  let out = '';
  let atWordStart = true;
  for (const ch of lower) {
    const letter = /\p{L}/u.test(ch);
    // зг is written zgh, so that it is not read as the zh of ж
    const mapped =
      atWordStart && UK_INITIAL[ch] !== undefined
        ? UK_INITIAL[ch]
        : ch === 'г' && out.endsWith('z')
          ? 'gh'
          : (UK[ch] ?? ch);
    out += mapped;
    atWordStart = !letter && UK[ch] === undefined;
  }
  const ascii = out
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return ascii.slice(0, MAX).replace(/-+$/, '');
}
