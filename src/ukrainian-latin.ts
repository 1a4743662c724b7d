/**
 * Ukrainian letters in Latin by the national table (Cabinet of Ministers resolution 55 of 2010, the one passports
 * use), with the Russian letters Ukrainian has not as passports write them: a letter's one form, or its forms at
 * the start of a word and inside one. The one table of the statements' file names (src/statement-file-names.ts)
 * and the payment file's SEPA names (src/payout-runs/charset.ts), each applying it its own way.
 */
export const UKRAINIAN_LATIN: Readonly<Record<string, string | readonly [string, string]>> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'h',
  ґ: 'g',
  д: 'd',
  е: 'e',
  є: ['ye', 'ie'],
  ж: 'zh',
  з: 'z',
  и: 'y',
  і: 'i',
  ї: ['yi', 'i'],
  й: ['y', 'i'],
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
  ю: ['yu', 'iu'],
  я: ['ya', 'ia'],
  ё: ['yo', 'io'],
  ы: 'y',
  э: 'e',
  ъ: '',
};

/** A letter's form inside a word (undefined: not in the table). */
export const innerLatin = (letter: string): string | undefined => {
  const e = UKRAINIAN_LATIN[letter];
  return e === undefined || typeof e === 'string' ? e : e[1];
};

/** A letter's form at the start of a word (undefined: not in the table). */
export const initialLatin = (letter: string): string | undefined => {
  const e = UKRAINIAN_LATIN[letter];
  return e === undefined || typeof e === 'string' ? e : e[0];
};
