import { describe, expect, it } from 'vitest';
import { ExportError } from '../../src/export/errors';
import { minorToMajor } from '../../src/export/workbook/xlsx';
import { minorUnits } from '../../src/ingest/bank/amount';
import { luhnValid } from '../../src/input-rules';
import { scrubber } from '../../src/log';
import { capturingLogger } from '../ingest/helpers';

/**
 * The scrubber of the log, the command line's stderr (src/cli/main.ts) and a job's recorded error masked every run
 * of 13 to 19 digits, whatever it was: an EXPORT_AMOUNT_TOO_LARGE refusal said "amount 123456******3456 minor
 * units", a bank file's limit "(at most 900719****7409.91)", a large commit position or a count likewise, so the
 * person reading saw a figure that is no figure. The store masks a card number only when it passes the check
 * digit and never an amount with decimals; now the log takes the store's masking, and a card number is still
 * masked in the ways it is written.
 */

const scrub = scrubber([]);

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('nothing thrown');
}

describe('the log and command-line scrubber keep figures', () => {
  it("an export's amount too large is shown as it is", () => {
    const e = thrown(() => minorToMajor(1234567890123456n));
    expect(e).toBeInstanceOf(ExportError);
    expect(e.message).toContain('1234567890123456');
    expect(scrub(e.message)).toBe(e.message);
    const { log, lines } = capturingLogger([]);
    log.error('statement failed', { error: e });
    expect(lines[0]).toContain('amount 1234567890123456 minor units');
  });

  it("a bank file's limit, with its decimals, is shown as it is", () => {
    const reason = minorUnits('999999999999999.00', '.');
    expect(typeof reason).toBe('string');
    const limit = /\(at most ([\d.]+)\)/.exec(reason as string)?.[1];
    expect(limit).toMatch(/^\d{13,}\.\d\d$/);
    expect(scrub(reason as string)).toContain(`(at most ${limit})`);
  });

  it('positions, counts and ids that are no card number are shown as they are', () => {
    const figures = ['9007199254740991', '18446744073709551', '1732870000123', '2122/73269 at 1234567890123'];
    for (const f of figures) expect(scrub(`read up to ${f}`)).toBe(`read up to ${f}`);
  });

  it('a card number is still masked however it is written', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    for (const written of ['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', 'visa_4111111111111111']) {
      const out = scrub(`card ${written} declined`);
      expect(out).not.toMatch(/4111[ -_]?1111[ -_]?1111[ -_]?1111/);
      expect(out).toContain('411111******1111');
    }
    // a card number followed by a number of its own is masked still
    expect(scrub('card 4111 1111 1111 1111 2025')).toBe('card 411111******1111 2025');
    expect(scrub('card 4111111111111111 12 times')).toBe('card 411111******1111 12 times');
  });
});
