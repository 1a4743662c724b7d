/**
 * A readable file-name part from a sub-merchant's name: Ukrainian transliterated by the national rules
 * (Cabinet of Ministers resolution 55 of 2010, the one passports use), other accents dropped, everything
 * else a hyphen. It depends on the name alone, so the same name gives the same file every month.
 */

const UK: Readonly<Record<string, string>> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'h',
  ґ: 'g',
  д: 'd',
  е: 'e',
  є: 'ie',
  ж: 'zh',
  з: 'z',
  и: 'y',
  і: 'i',
  ї: 'i',
  й: 'i',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ь: '',
  ю: 'iu',
  я: 'ia',
  ы: 'y',
  э: 'e',
  ё: 'io',
  ъ: '',
  '’': '',
  "'": '',
  ʼ: '',
};

// at the start of a word these letters are written as in English (є → ye, ї → yi, й → y, ю → yu, я → ya)
const UK_INITIAL: Readonly<Record<string, string>> = { є: 'ye', ї: 'yi', й: 'y', ю: 'yu', я: 'ya' };

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
