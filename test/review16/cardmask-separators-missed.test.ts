import { describe, expect, it } from 'vitest';
import { maskCardNumbersInJson } from '../../src/ingest/card-numbers';
import { checkText, luhnValid, maskCardNumbersInText, NOTE_TEXT } from '../../src/input-rules';
import { capturingLogger } from '../ingest/helpers';

/**
 * A card number was masked by the store only when its groups were joined by one plain space or one dash, the
 * same one throughout, and by the log only by one plain space or dash: written with no-break spaces (U+00A0, as a
 * word processor or a bank's PDF joins them), narrow no-break spaces (U+202F), two spaces, underscores or mixed
 * separators, it was kept whole in a note, a bank remittance, an order's reference and the log. So was a 19-digit
 * card printed in five groups (4-4-4-4-3), and a card number right after an escaped line break in a JSON text (a
 * PSP record's recorded text, a log line: `\n4111…`, the `n` taken for a word's letter). Now all are masked.
 */

const PAN = '4111111111111111';
const DIGITS = /\d/g;

/** A 19-digit number passing the check digit, built here from its first 18 digits. */
function nineteen(): string {
  const body = '622126000000000000';
  for (let d = 0; d <= 9; d++) if (luhnValid(`${body}${d}`)) return `${body}${d}`;
  throw new Error('no check digit');
}

const groups = (pan: string, sizes: number[]) => {
  const out: string[] = [];
  let at = 0;
  for (const n of sizes) {
    out.push(pan.slice(at, at + n));
    at += n;
  }
  return out;
};

const WRITTEN: Record<string, string> = {
  'no-break spaces': groups(PAN, [4, 4, 4, 4]).join('\u00a0'),
  'narrow no-break spaces': groups(PAN, [4, 4, 4, 4]).join('\u202f'),
  'two spaces': groups(PAN, [4, 4, 4, 4]).join('  '),
  underscores: groups(PAN, [4, 4, 4, 4]).join('_'),
  'mixed separators': '4111 1111-1111 1111',
  'a 19-digit card in five groups': groups(nineteen(), [4, 4, 4, 4, 3]).join(' '),
};

/** Whether `text` still shows more of the card than its first six and last four digits. */
function showsWhole(text: string, pan: string): boolean {
  return (text.match(DIGITS) ?? []).join('').includes(pan.slice(0, 12));
}

describe('a card number written with other separators', () => {
  for (const [how, written] of Object.entries(WRITTEN)) {
    const pan = (written.match(DIGITS) ?? []).join('');
    it(`with ${how} is masked in a note, a bank text and the log`, () => {
      expect(luhnValid(pan)).toBe(true);
      const note = checkText(`customer paid with ${written}, refund`, NOTE_TEXT);
      expect(note.ok).toBe(true);
      if (note.ok) {
        expect(showsWhole(note.value, pan)).toBe(false);
        expect(note.value).toContain(`${pan.slice(0, 6)}`);
        expect(note.value).toContain(`${pan.slice(-4)}, refund`);
      }
      const remittance = maskCardNumbersInText(`REFUND ${written} THANKS`, true) ?? '';
      expect(showsWhole(remittance, pan)).toBe(false);
      const { log, lines } = capturingLogger([]);
      log.warn('refused', { value: `card ${written}` });
      expect(lines).toHaveLength(1);
      expect(showsWhole(lines[0]!, pan)).toBe(false);
    });
  }

  it('right after an escaped line break, in a JSON text and in the log', () => {
    const raw = JSON.stringify({ description: `paid by card\n${PAN}` });
    expect(raw).toContain(`\\n${PAN}`);
    expect(showsWhole(maskCardNumbersInJson(raw), PAN)).toBe(false);
    const { log, lines } = capturingLogger([]);
    log.warn('refused', { value: `line one\n${PAN}` });
    expect(showsWhole(lines[0]!, PAN)).toBe(false);
  });
});
