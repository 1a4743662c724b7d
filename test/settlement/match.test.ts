import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addBusinessDays, businessDaysAfter, settlementDayOf } from '../../src/business-days';
import { dueDays, type ActivityDay, type DueDay } from '../../src/reconciliation/settlement/expected';
import { judgeSettlements, type BankCredit, type MatchRules } from '../../src/reconciliation/settlement/match';

const NONE = new Set<string>();
const rules = (over: Partial<MatchRules> = {}): MatchRules => ({
  tolerance: 0n,
  lateBusinessDays: 3,
  holidays: NONE,
  ...over,
});
const due = (day: string, amount: bigint, lastActivity = '2026-01-01'): DueDay => ({
  currency: 'EUR',
  day,
  firstActivity: lastActivity,
  lastActivity,
  clearing: amount,
  fees: 0n,
  amount,
});
const credit = (id: string, bookingDate: string, amount: bigint): BankCredit => ({
  id,
  accountId: 'DE00SETTLE',
  currency: 'EUR',
  bookingDate,
  amount,
  bankRef: `ref-${id}`,
});

describe('business days of RECON_TIMEZONE', () => {
  it('skips weekends and holidays', () => {
    // 2026-01-02 is a Friday; 2026-01-05 a Monday
    expect(settlementDayOf('2026-01-02', 1, NONE)).toBe('2026-01-05');
    expect(settlementDayOf('2026-01-03', 1, NONE)).toBe('2026-01-05');
    expect(settlementDayOf('2026-01-04', 1, NONE)).toBe('2026-01-05');
    expect(settlementDayOf('2026-01-02', 1, new Set(['2026-01-05']))).toBe('2026-01-06');
    expect(settlementDayOf('2026-01-01', 2, new Set(['2026-01-02']))).toBe('2026-01-06');
    // lag 0: the day itself when it is a business day
    expect(addBusinessDays('2026-01-02', 0, NONE)).toBe('2026-01-02');
    expect(addBusinessDays('2026-01-03', 0, NONE)).toBe('2026-01-05');
    expect(businessDaysAfter('2026-01-02', '2026-01-06', NONE)).toBe(2);
    expect(businessDaysAfter('2026-01-02', '2026-01-06', new Set(['2026-01-05']))).toBe(1);
  });
});

describe('due days', () => {
  const day = (d: string, clearing: bigint, fees = 0n): ActivityDay => ({ currency: 'EUR', day: d, clearing, fees });
  it('groups a weekend with the Friday it settles with, net of fees', () => {
    const out = dueDays([day('2026-01-02', 1000n, 10n), day('2026-01-03', 500n, 5n), day('2026-01-04', 200n, 2n)], {
      lagBusinessDays: 1,
      holidays: NONE,
    });
    expect(out).toEqual([
      {
        currency: 'EUR',
        day: '2026-01-05',
        firstActivity: '2026-01-02',
        lastActivity: '2026-01-04',
        clearing: 1700n,
        fees: 17n,
        amount: 1683n,
      },
    ]);
  });
  it('carries a day whose refunds exceed its sales into the next settlement', () => {
    const out = dueDays([day('2026-01-05', -300n, 5n), day('2026-01-06', 1000n, 10n)], {
      lagBusinessDays: 1,
      holidays: NONE,
    });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ day: '2026-01-07', firstActivity: '2026-01-05', amount: 685n });
  });
});

describe('matching', () => {
  it('one credit pays several due days (N:1) and the tolerance is the bank fee', () => {
    const j = judgeSettlements(
      [due('2026-01-05', 1000n), due('2026-01-06', 500n), due('2026-01-07', 700n)],
      [credit('a', '2026-01-06', 1497n), credit('b', '2026-01-07', 700n)],
      '2026-01-07',
      rules({ tolerance: 5n }),
    );
    expect(j.matches.map((m) => [m.credit.id, m.days.map((d) => d.day), m.bankFee, m.shortfall])).toEqual([
      ['a', ['2026-01-05', '2026-01-06'], 3n, 0n],
      ['b', ['2026-01-07'], 0n, 0n],
    ]);
    // the Monday was paid on Tuesday
    expect(j.matches[0]!.late).toEqual([{ day: '2026-01-05', businessDays: 1 }]);
    expect(j.missing).toEqual([]);
    expect(j.unexpected).toEqual([]);
  });

  it('a credit short by more than the tolerance is a short payment of the earliest due day', () => {
    const j = judgeSettlements(
      [due('2026-01-05', 1000n)],
      [credit('a', '2026-01-05', 900n)],
      null,
      rules({ tolerance: 5n }),
    );
    expect(j.matches).toHaveLength(1);
    expect(j.matches[0]).toMatchObject({ shortfall: 100n, bankFee: 0n, expected: 1000n });
  });

  it('a settlement paid in two credits: the short first one and the rest (within tolerance) pay the day in full', () => {
    const d = [due('2026-01-05', 1000n)];
    const j = judgeSettlements(
      d,
      [credit('a', '2026-01-05', 600n), credit('b', '2026-01-06', 397n)],
      '2026-01-09',
      rules({ tolerance: 5n }),
    );
    expect(j.unexpected).toEqual([]);
    expect(j.missing).toEqual([]);
    expect(j.matches.map((m) => [m.credit.id, m.expected, m.bankFee, m.shortfall, m.restOf ?? null])).toEqual([
      ['a', 600n, 0n, 0n, null],
      ['b', 400n, 3n, 0n, 'a'],
    ]);
    // the day was complete when the second came, a business day after it was due: one late day, on that credit
    expect(j.matches.map((m) => m.late)).toEqual([[], [{ day: '2026-01-05', businessDays: 1 }]]);
    // the smaller part booked first changes nothing but which is first
    const first = judgeSettlements(
      d,
      [credit('a', '2026-01-06', 600n), credit('b', '2026-01-05', 400n)],
      '2026-01-09',
      rules(),
    );
    expect(first.matches.map((m) => [m.credit.id, m.expected, m.restOf ?? null])).toEqual([
      ['b', 400n, 'a'],
      ['a', 600n, null],
    ]);
    expect(first.unexpected).toEqual([]);
  });

  it('a second credit that does not come to the rest, or a third part, stays unexpected beside the short one', () => {
    const d = [due('2026-01-05', 1000n)];
    const tooMuch = judgeSettlements(
      d,
      [credit('a', '2026-01-05', 600n), credit('b', '2026-01-06', 450n)],
      '2026-01-09',
      rules({ tolerance: 5n }),
    );
    expect(tooMuch.matches.map((m) => [m.credit.id, m.shortfall])).toEqual([['a', 400n]]);
    expect(tooMuch.unexpected.map((c) => c.id)).toEqual(['b']);
    const short = judgeSettlements(
      d,
      [credit('a', '2026-01-05', 600n), credit('b', '2026-01-06', 390n)],
      '2026-01-09',
      rules({ tolerance: 5n }),
    );
    expect(short.matches.map((m) => [m.credit.id, m.shortfall])).toEqual([['a', 400n]]);
    expect(short.unexpected.map((c) => c.id)).toEqual(['b']);
    // a day split in three: the first is short, the other two unexpected (one credit pays the rest, not two)
    const three = judgeSettlements(
      d,
      [credit('a', '2026-01-05', 500n), credit('b', '2026-01-05', 300n), credit('c', '2026-01-06', 200n)],
      '2026-01-09',
      rules(),
    );
    expect(three.matches.map((m) => [m.credit.id, m.shortfall])).toEqual([['a', 500n]]);
    expect(three.unexpected.map((c) => c.id).sort()).toEqual(['b', 'c']);
  });

  it('with a lag of 0 a credit booked on the settlement day pays it', () => {
    const d = dueDays([{ currency: 'EUR', day: '2026-01-06', clearing: 1000n, fees: 0n }], {
      lagBusinessDays: 0,
      holidays: NONE,
    });
    expect(d[0]!.day).toBe('2026-01-06');
    const j = judgeSettlements(d, [credit('a', '2026-01-06', 1000n)], '2026-01-06', rules());
    expect(j.matches.map((m) => m.credit.id)).toEqual(['a']);
    expect(j.matches[0]!.late).toEqual([]);
  });

  it('a due day is missing once a statement covers its deadline; before that in transit', () => {
    const d = [due('2026-01-05', 1000n)];
    expect(judgeSettlements(d, [], '2026-01-07', rules()).inTransit).toHaveLength(1);
    expect(judgeSettlements(d, [], '2026-01-08', rules()).missing).toHaveLength(1);
  });

  it('a credit after the deadline, too small or too large, or before the money was collected is unexpected', () => {
    const j = judgeSettlements(
      [due('2026-01-05', 1000n, '2026-01-02')],
      [
        credit('late', '2026-01-09', 1000n),
        credit('tiny', '2026-01-05', 100n),
        credit('big', '2026-01-05', 1200n),
        credit('early', '2026-01-02', 1000n),
      ],
      '2026-01-09',
      rules(),
    );
    expect(j.matches).toEqual([]);
    expect(j.unexpected.map((c) => c.id).sort()).toEqual(['big', 'early', 'late', 'tiny']);
    expect(j.missing).toHaveLength(1);
  });
});

describe('matching properties', () => {
  const days = ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08', '2026-01-09', '2026-01-12', '2026-01-13'];
  const world = fc.record({
    amounts: fc.array(fc.bigInt({ min: 1n, max: 50_000n }), { minLength: 1, maxLength: days.length }),
    // each credit pays a run [start, start+len) of due days, less a charge; extra credits are noise
    pays: fc.array(
      fc.record({
        start: fc.nat(6),
        len: fc.integer({ min: 1, max: 3 }),
        less: fc.bigInt({ min: 0n, max: 9n }),
        late: fc.nat(2),
      }),
      { maxLength: 5 },
    ),
    noise: fc.array(fc.record({ day: fc.nat(6), amount: fc.bigInt({ min: 1n, max: 80_000n }) }), { maxLength: 3 }),
    seed: fc.integer(),
  });
  type World = typeof world extends fc.Arbitrary<infer T> ? T : never;
  const build = (w: World) => {
    const d = w.amounts.map((a, i) => due(days[i]!, a));
    const c: BankCredit[] = [];
    w.pays.forEach((p, n) => {
      const run = d.slice(p.start, p.start + p.len);
      if (run.length === 0) return;
      const sum = run.reduce((s, x) => s + x.amount, 0n);
      const on = days[Math.min(days.length - 1, p.start + p.len - 1 + p.late)]!;
      if (sum - p.less > 0n) c.push(credit(`p${n}`, on, sum - p.less));
    });
    w.noise.forEach((x, n) => {
      c.push(credit(`n${n}`, days[x.day]!, x.amount));
    });
    return { d, c };
  };
  const shuffle = <T>(xs: readonly T[], seed: number): T[] => {
    const out = [...xs];
    let s = seed >>> 0 || 1;
    for (let i = out.length - 1; i > 0; i--) {
      s = (s * 1103515245 + 12345) >>> 0;
      const k = s % (i + 1);
      [out[i], out[k]] = [out[k]!, out[i]!];
    }
    return out;
  };
  const view = (j: ReturnType<typeof judgeSettlements>) => ({
    m: j.matches.map((m) => [m.credit.id, m.days.map((x) => x.day), m.bankFee, m.shortfall]),
    u: j.unexpected.map((c) => c.id).sort(),
    missing: j.missing.map((x) => x.day),
  });

  it('order of import is irrelevant; sums are exact in minor units; no bank line or due day is claimed twice', () => {
    fc.assert(
      fc.property(world, (w) => {
        const { d, c } = build(w);
        const r = rules({ tolerance: 9n });
        const a = judgeSettlements(d, c, '2026-01-13', r);
        const b = judgeSettlements(shuffle(d, w.seed), shuffle(c, w.seed + 1), '2026-01-13', r);
        expect(view(b)).toEqual(view(a));
        const credits = new Set<string>();
        const claimed = new Set<string>();
        // a day paid in two credits: the first's part and the rest's together are the day's amount
        const rests = new Map(a.matches.filter((m) => m.restOf).map((m) => [m.restOf!, m]));
        for (const m of a.matches) {
          const rest = rests.get(m.credit.id);
          if (!m.restOf) expect(m.days.reduce((s, x) => s + x.amount, 0n)).toBe(m.expected + (rest?.expected ?? 0n));
          expect(m.credit.amount + m.bankFee + m.shortfall).toBe(m.expected);
          expect(m.bankFee >= 0n && m.bankFee <= 9n).toBe(true);
          expect(credits.has(m.credit.id)).toBe(false);
          credits.add(m.credit.id);
          if (m.restOf) continue;
          for (const x of m.days) {
            expect(claimed.has(x.day)).toBe(false);
            claimed.add(x.day);
          }
        }
        for (const u of a.unexpected) expect(credits.has(u.id)).toBe(false);
        expect(a.matches.length + a.unexpected.length).toBe(c.length);
        expect(claimed.size + a.missing.length + a.inTransit.length).toBe(d.length);
      }),
      { numRuns: 300 },
    );
  });
});
