import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, DOC, discrepancyTable, END, withTable } from '../../scripts/discrepancy-table';
import { DEFAULT_HOLD_RULES } from '../../src/config/hold-policy';
import { HOLD_REASON_TEXTS, reasonOf } from '../../src/export/payouts/holds';
import { holdReason } from '../../src/export/i18n/labels';
import { ORDER_DISCREPANCY_TYPES, ORDER_HOLD_TYPES } from '../../src/reconciliation/discrepancies/order-types';
import {
  DISCREPANCY_REGISTRY,
  DISCREPANCY_TYPES,
  entryOf,
  HOLD_RULES,
  LEGS,
  SANDBOX_SOURCES,
  SEVERITIES,
  typesInjectedBy,
  typesOfLeg,
} from '../../src/reconciliation/discrepancies/registry';
import {
  HOLDING_TYPES,
  PAYOUT_DISCREPANCY_TYPES,
  RECONCILIATION_TYPES,
  SETTLEMENT_DISCREPANCY_TYPES,
} from '../../src/reconciliation/discrepancy-types';
import { bankWorld, type ExpectedPayout } from '../../src/sandbox/bank';
import { sandboxIntent } from '../../src/sandbox/intent';
import { GROUND_TRUTH_TYPES } from '../../src/sandbox/model';
import { scenarioFor } from '../../fixtures/scenario-events';

/**
 * The registry of discrepancy types (issue 24): every type has a leg, a meaning in English and Ukrainian, a
 * hold rule (with the reason statements print for money it holds, in both languages), a severity by the rule of
 * severities, and a sandbox injection (or the reason there is none and the test that builds one by hand); every
 * list of types is the registry's; docs/discrepancies.md shows it as one table.
 */

const CYRILLIC = /[\u0400-\u04ff]/;
const sorted = (xs: Iterable<string>) => [...xs].sort();

describe('the registry of discrepancy types', () => {
  it('gives every type a leg, a meaning in both languages, a hold rule, a severity and a sandbox injection', () => {
    expect(DISCREPANCY_TYPES).toHaveLength(28);
    for (const type of DISCREPANCY_TYPES) {
      const e = entryOf(type);
      expect(LEGS, type).toContain(e.leg);
      expect(e.meaning.en, type).toMatch(/^[a-z].{15,}[^.]$/);
      expect(e.meaning.en, type).not.toMatch(CYRILLIC);
      expect(e.meaning.uk, type).toMatch(CYRILLIC);
      expect(HOLD_RULES, type).toContain(e.hold.rule);
      expect(e.hold.inDoubt, type).not.toBe('');
      if (e.hold.rule === 'none') expect(e.hold, type).not.toHaveProperty('reason');
      else {
        expect(e.hold.reason.en, type).toMatch(/^the .{10,}$/);
        expect(e.hold.reason.en, type).not.toMatch(CYRILLIC);
        expect(e.hold.reason.uk, type).toMatch(CYRILLIC);
      }
      expect(SEVERITIES, type).toContain(e.severity);
      if (e.sandbox.by === null) {
        // a type the sandbox cannot inject says why, and names the test that builds one by hand
        expect(e.sandbox.why, type).toMatch(/^the sandbox .{20,}/);
        expect(existsSync(e.sandbox.testedIn), `${type}: ${e.sandbox.testedIn}`).toBe(true);
        expect(readFileSync(e.sandbox.testedIn, 'utf8'), type).toContain(type);
      } else {
        expect(SANDBOX_SOURCES, type).toContain(e.sandbox.by);
        expect(e.sandbox.how, type).not.toBe('');
      }
    }
  });

  it('sets each default severity by the rule of severities', () => {
    for (const type of DISCREPANCY_TYPES) {
      const { leg, hold, severity } = entryOf(type);
      // the whole payment in doubt is high, a difference medium; nothing in doubt on the PSP's or orders' leg low
      if (hold.rule === 'payment') expect(severity, type).toBe('high');
      if (hold.rule === 'difference') expect(severity, type).toBe('medium');
      if (hold.rule === 'none' && (leg === 'psp' || leg === 'orders')) expect(severity, type).toBe('low');
      // only the company's own cash is critical: the bank's side of payouts and settlements
      if (severity === 'critical') expect(['payouts', 'settlement'], type).toContain(leg);
      if (leg === 'payouts' || leg === 'settlement') expect(['medium', 'high', 'critical'], type).toContain(severity);
    }
    expect(new Set(DISCREPANCY_TYPES.map((t) => entryOf(t).severity))).toEqual(new Set(SEVERITIES));
  });

  it('is injected by the sandbox exactly where it says', () => {
    const scenario = scenarioFor({ seed: 'registry', payments: 300, month: '2025-03', subMerchants: 5 });
    const payouts: ExpectedPayout[] = scenario.subMerchants.map((s, i) => ({
      reference: `ST-2025-03-${String(i + 1).padStart(4, '0')}`,
      subMerchantId: s.id,
      payeeAccount: `UA21322313000002600723356600${i}`,
      payeeName: s.name,
      currency: 'UAH',
      amount: 100_000n + BigInt(i) * 1_234n,
      issuedOn: '2025-04-01',
    }));
    const accounts = Object.fromEntries(
      ['EUR', 'UAH', 'USD', 'XTS'].map((c, i) => [
        c,
        { settlement: `DE8937040044053201300${i}`, payouts: `DE8937040044053201310${i}` },
      ]),
    );
    const bank = bankWorld(scenario, { accounts, payouts, tolerance: { EUR: 50n, UAH: 200n, USD: 50n, XTS: 50n } });
    const found = {
      scenario: new Set(scenario.groundTruth.map((g) => g.type)),
      intent: new Set(sandboxIntent(scenario).groundTruth.map((g) => g.type)),
      // a statement that does not foot is refused at import: no discrepancy type
      bank: new Set(bank.truth.map((t) => t.type).filter((t) => t !== 'statement_unbalanced')),
    };
    for (const by of SANDBOX_SOURCES) expect(sorted(found[by]), by).toEqual(sorted(typesInjectedBy(by)));
    const injected = SANDBOX_SOURCES.flatMap((by) => typesInjectedBy(by));
    const notInjected = DISCREPANCY_TYPES.filter((t) => entryOf(t).sandbox.by === null);
    expect(sorted([...injected, ...notInjected])).toEqual(sorted(DISCREPANCY_TYPES));
    expect(GROUND_TRUTH_TYPES).toEqual(typesInjectedBy('scenario'));
  });

  it('is where every list of types comes from', () => {
    expect([...RECONCILIATION_TYPES]).toEqual(typesOfLeg('psp'));
    expect([...PAYOUT_DISCREPANCY_TYPES]).toEqual(typesOfLeg('payouts'));
    expect([...SETTLEMENT_DISCREPANCY_TYPES]).toEqual(typesOfLeg('settlement'));
    expect([...ORDER_DISCREPANCY_TYPES]).toEqual(typesOfLeg('orders'));
    expect(sorted(LEGS.flatMap((l) => typesOfLeg(l)))).toEqual(sorted(DISCREPANCY_TYPES));
    expect(DEFAULT_HOLD_RULES).toEqual(Object.fromEntries(DISCREPANCY_TYPES.map((t) => [t, entryOf(t).hold.rule])));
    const holding = DISCREPANCY_TYPES.filter((t) => entryOf(t).hold.rule !== 'none');
    expect([...HOLDING_TYPES]).toEqual(holding);
    expect(sorted(ORDER_HOLD_TYPES)).toEqual(sorted(holding.filter((t) => entryOf(t).leg === 'orders')));
    expect(Object.keys(DISCREPANCY_REGISTRY)).toEqual([...DISCREPANCY_TYPES]);
  });

  it("gives statements each holding type's reason, word for word, in English and Ukrainian", () => {
    for (const type of DISCREPANCY_TYPES) {
      const { hold } = entryOf(type);
      if (hold.rule === 'none') {
        expect(reasonOf(type), type).toBe('under investigation');
        continue;
      }
      expect(reasonOf(type), type).toBe(hold.reason.en);
      expect(HOLD_REASON_TEXTS, type).toContain(hold.reason.en);
      expect(holdReason(hold.reason.en, 'en'), type).toBe(hold.reason.en);
      expect(holdReason(hold.reason.en, 'uk'), type).toBe(hold.reason.uk);
      expect(holdReason(`${hold.reason.en} (reviewed: withheld)`, 'uk'), type).toBe(
        `${hold.reason.uk} (розглянуто: утримано)`,
      );
    }
    // the texts statements already carry stay as they were (a changed word would change a statement's bytes)
    expect(reasonOf('missing_in_report')).toBe("the payment is missing from the payment provider's register");
    expect(holdReason('the fee charged is above the contract: the difference is held', 'uk')).toBe(
      'стягнута комісія вища за договірну: утримано різницю',
    );
  });

  it('is the one table of types in docs/discrepancies.md', () => {
    const doc = readFileSync(DOC, 'utf8');
    expect(withTable(doc)).toBe(doc);
    expect(doc.split(BEGIN)).toHaveLength(2);
    const table = doc.slice(doc.indexOf(BEGIN), doc.indexOf(END));
    expect(table).toContain(discrepancyTable());
    for (const type of DISCREPANCY_TYPES) {
      const e = entryOf(type);
      expect(table, type).toContain(`| \`${type}\` | ${e.leg} | ${e.meaning.en} |`);
      // no second table of types with their legs or hold rules besides this one
      const rows = doc.split('\n').filter((l) => l.startsWith(`| \`${type}\` |`));
      expect(
        rows.filter((l) => /\| (yes|no|payment|difference) \|/.test(l)),
        type,
      ).toHaveLength(1);
    }
  });
});
