import { sha256Hex } from './canonical';
import { initialLatin, innerLatin, UKRAINIAN_LATIN } from './ukrainian-latin';

/**
 * The names of a sub-merchant's statement files (`<id>-<slug of the name>-YYYY-MM.xlsx`, docs/outputs.md), here
 * rather than in the statements alone: the directory refuses two sub-merchants whose files would be one, which a
 * month's run then refuses whole (src/ingest/sub-merchants.ts).
 */

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

const SAFE_FILE_NAME = /^[A-Za-z0-9._-]+$/;
/**
 * The most characters of an id a file name keeps: the name, its slug, month and a temporary name's suffix stay
 * far below the 255 bytes a file system allows (a `receiver:<name>` id is as long as the PSP's receiverName).
 */
const MAX_ID_IN_FILE_NAME = 100;

/**
 * A statement file's name before its month: the sub-merchant id and a readable slug of its name. An id unsafe on
 * some file system keeps its safe characters and the first 8 hex digits of its sha-256, so ids differing only in
 * other characters (two Cyrillic names of one length, both `receiver:____`) never share a file; the id in every
 * name keeps two sub-merchants of one name apart. An id over MAX_ID_IN_FILE_NAME characters keeps its first ones
 * and the hash.
 */
export function statementFileStem(subMerchantId: string, name?: string): string {
  const id =
    SAFE_FILE_NAME.test(subMerchantId) && subMerchantId.length <= MAX_ID_IN_FILE_NAME
      ? subMerchantId
      : `${subMerchantId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, MAX_ID_IN_FILE_NAME)}-${sha256Hex(subMerchantId).slice(0, 8)}`;
  const slug = name ? slugOf(name) : '';
  return `${id}${slug ? `-${slug}` : ''}`;
}
