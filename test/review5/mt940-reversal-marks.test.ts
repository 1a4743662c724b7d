import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { bankDoors } from '../bad-input/bank-harness';
import { mt940Text, tempFile } from '../ingest/bank/support';

/**
 * Review 5: MT940 `:61:` marks `RC` and `RD` (SWIFT: "RC Reversal of credit (debit entry)", "RD Reversal of
 * debit (credit entry)") were read by their last letter: a payout the bank returned (`RD`, money back in) was
 * booked as a second debit, so a real statement with a return did not foot and the whole import was refused.
 */

const t = useTestStore();

// a payout of 50.00 out, the bank returns it (RD: a credit); a wrong credit of 20.00 taken back (RC: a debit)
const statement = [
  ':20:R5-REV',
  ':25:DE89370400440532013000',
  ':28C:00001/001',
  ':60F:C250601EUR100,00',
  ':61:2506010601D50,00NTRFNONREF//R5-OUT',
  ':86:PAYOUT RS-SM-A-2025-05-EUR',
  ':61:2506020602RD50,00NTRFNONREF//R5-BACK',
  ':86:RETURN RS-SM-A-2025-05-EUR',
  ':61:2506020602C20,00NTRFNONREF//R5-WRONG',
  ':86:CREDIT IN ERROR',
  ':61:2506020602RC20,00NTRFNONREF//R5-TAKEN',
  ':86:REVERSAL OF CREDIT',
  ':62F:C250602EUR100,00',
  '-',
  '',
].join('\n');

describe('review5: MT940 reversal marks', () => {
  it('RD is a credit and RC a debit, both returns; the statement foots', async () => {
    const { entries } = await mt940Text(statement);
    expect(entries.map((e) => [e.bankRef, e.direction, e.amount, e.isReversal])).toEqual([
      ['R5-OUT', 'debit', 5000n, false],
      ['R5-BACK', 'credit', 5000n, true],
      ['R5-WRONG', 'credit', 2000n, false],
      ['R5-TAKEN', 'debit', 2000n, true],
    ]);
  });

  it('is imported (it was refused as not footing)', async () => {
    const { importFiles } = bankDoors(t);
    const out = await importFiles([tempFile('r5-rev.sta', statement)]);
    expect(out.reduce((n, f) => n + f.entries, 0)).toBe(4);
  });
});
