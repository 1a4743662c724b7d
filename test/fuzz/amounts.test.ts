import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMinor, MAX_MINOR, parseAmount } from '../../src/money';
import { amountText, oracleMinor } from './oracle';

const RUN = { numRuns: 3000, interruptAfterTimeLimit: 3000 } as const;

describe('parseAmount against a string-arithmetic oracle (property)', () => {
  it('accepts exactly what the oracle accepts, with the same minor units, for text', () => {
    fc.assert(
      fc.property(amountText, fc.boolean(), (text, allowNegative) => {
        const r = parseAmount(text, { allowNegative });
        const o = oracleMinor(text, { allowNegative });
        expect(r.ok ? r.minor.toString() : null).toBe(o);
        expect(r.raw).toBe(text);
      }),
      RUN,
    );
  });

  it('reads JS numbers through their shortest text, exactly', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double(),
          fc.integer().map((i) => i / 100),
          fc.integer({ min: -1e6, max: 1e6 }).map((i) => i / 1000),
        ),
        (n) => {
          const r = parseAmount(n, { allowNegative: true });
          expect(r.ok ? r.minor.toString() : null).toBe(
            Number.isFinite(n) ? oracleMinor(String(n), { allowNegative: true }) : null,
          );
        },
      ),
      RUN,
    );
  });

  it('round-trips every accepted amount through formatMinor, and never exceeds the bound', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX_MINOR, max: MAX_MINOR }), (minor) => {
        const text = formatMinor(minor);
        expect(oracleMinor(text, { allowNegative: true })).toBe(minor.toString());
        const r = parseAmount(text, { allowNegative: true });
        expect(r).toMatchObject({ ok: true, minor });
      }),
      RUN,
    );
    expect(parseAmount(formatMinor(MAX_MINOR + 1n)).ok).toBe(false);
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true }), (v) => {
        const r = parseAmount(v);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 500, interruptAfterTimeLimit: 2000 },
    );
  });
});
