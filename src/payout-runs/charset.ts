import { UKRAINIAN_LATIN } from '../ukrainian-latin';
import { clip, NOT_IN_BANK_SETS, PARTY_NAME_MAX, partyName } from './pain001';

/**
 * The characters the payment file's names are written in (`bank.payouts.charset`, docs/exceptions.md "Payout
 * runs"). `utf8`: as the directory gives them (a bank that takes UTF-8, as Ukrainian banks do for UAH). `sepa`:
 * the Latin character set of the EPC rulebook (a-z A-Z 0-9 / - ? : ( ) . , ' + space), which SEPA banks hold a
 * whole file to: Cyrillic transliterated (Ukrainian by the national table, KMU 2010 No. 55), Latin letters
 * without their accents, a few signs by their usual stand-ins; a name with anything else is not written at all,
 * never written otherwise than it reads.
 */

export const PAYMENT_CHARSETS = ['utf8', 'sepa'] as const;
export type PaymentCharset = (typeof PAYMENT_CHARSETS)[number];

const SEPA = /^[A-Za-z0-9/\-?:().,'+ ]*$/;

// letters a plain accent strip does not reach, and signs with a usual stand-in in the set
const OTHER: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  ø: 'o',
  Ø: 'O',
  œ: 'oe',
  Œ: 'OE',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ı: 'i',
  '&': '+',
  '«': "'",
  '»': "'",
  '"': "'",
  '“': "'",
  '”': "'",
  '„': "'",
  '‘': "'",
  '’': "'",
  ʼ: "'",
  '`': "'",
  '–': '-',
  '—': '-',
  '‐': '-',
  '‑': '-',
  _: '-',
  '№': 'No',
};

const isCyrillic = (ch: string | undefined) => ch !== undefined && UKRAINIAN_LATIN[ch.toLowerCase()] !== undefined;
const APOSTROPHES = new Set(["'", '’', 'ʼ', '`']);

/** One Cyrillic letter at `i` of `cps`, in Latin, cased as it stands (a word in capitals stays in capitals). */
function cyrillicAt(cps: readonly string[], i: number): string {
  const ch = cps[i]!;
  const lower = ch.toLowerCase();
  const prev = cps[i - 1];
  const wordStart = !isCyrillic(prev) && !(APOSTROPHES.has(prev ?? '') && isCyrillic(cps[i - 2]));
  const entry = UKRAINIAN_LATIN[lower]!;
  // "зг" is written zgh, so that it does not read as the letter ж (zh)
  const latin =
    typeof entry === 'string'
      ? lower === 'г' && prev?.toLowerCase() === 'з'
        ? 'gh'
        : entry
      : entry[wordStart ? 0 : 1];
  if (ch === lower || latin === '') return latin;
  const next = cps[i + 1];
  const capitals =
    (next !== undefined && isCyrillic(next) && next !== next.toLowerCase()) ||
    (isCyrillic(prev) && prev !== prev!.toLowerCase());
  return capitals ? latin.toUpperCase() : latin[0]!.toUpperCase() + latin.slice(1);
}

/** `s` in the SEPA Latin character set, or null when a character of it has no place there. */
export function sepaText(s: string): string | null {
  const cps = [...s.normalize('NFC')];
  const out = cps.map((ch, i) => {
    if (isCyrillic(ch)) return cyrillicAt(cps, i);
    // the apostrophe inside a Ukrainian word is not written (м'ята: miata)
    if (APOSTROPHES.has(ch) && isCyrillic(cps[i - 1]) && isCyrillic(cps[i + 1])) return '';
    return OTHER[ch] ?? ch.normalize('NFD').replace(/\p{M}/gu, '');
  });
  const text = out.join('');
  return SEPA.test(text) ? text : null;
}

/**
 * A party's name as a run records it in `charset` (partyName: no pictographs, at most PARTY_NAME_MAX
 * characters); '' when nothing is left, null when `sepa` cannot write it.
 */
export function partyNameIn(s: string, charset: PaymentCharset): string | null {
  if (charset === 'utf8') return partyName(s);
  const latin = sepaText(clip(s.replace(NOT_IN_BANK_SETS, ' '), Number.MAX_SAFE_INTEGER));
  return latin === null ? null : clip(latin, PARTY_NAME_MAX).trimEnd();
}
