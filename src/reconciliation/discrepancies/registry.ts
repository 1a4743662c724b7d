/**
 * The registry of discrepancy types (issue 24): one entry per type, and every list of types recon keeps is
 * derived from it (src/reconciliation/discrepancy-types.ts, src/reconciliation/discrepancies/order-types.ts, the default hold
 * policy in src/config/hold-policy.ts, the hold reasons of src/export/payouts/holds.ts and src/export/i18n/labels.ts,
 * the sandbox's ground truth). A leaf: it imports nothing, so that the sandbox and the config can read it
 * without reaching any leg. docs/discrepancies.md shows it as one table (scripts/discrepancy-table.ts writes it,
 * test/discrepancies/registry.test.ts checks it).
 *
 * An entry says:
 *   leg        which reconciliation finds it: psp (the PSP's sources against each other), orders (the
 *              marketplace's orders and fee contract against the PSP), payouts (payouts against the bank's
 *              debits), settlement (what the PSP owes against the bank's credits)
 *   meaning    what it means, in English and Ukrainian (for people, not statements)
 *   hold       the default hold rule (payment, difference or none; src/config/hold-policy.ts), the amount in
 *              doubt in words, and for a type that holds money the reason a statement prints, word for word
 *   severity   the default severity, by kind (SEVERITY_RULE below)
 *   sandbox    how the sandbox injects it as ground truth (scenario: src/sandbox/injections.ts and
 *              ground-truth.ts; intent: src/sandbox/intent.ts; bank: src/sandbox/bank.ts), or why it does not
 *              and which test builds one by hand instead
 */

export const LEGS = ['psp', 'orders', 'payouts', 'settlement'] as const;
export type Leg = (typeof LEGS)[number];

export const HOLD_RULES = ['payment', 'difference', 'none'] as const;
export type HoldRule = (typeof HOLD_RULES)[number];

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * How a default severity is chosen, by what the discrepancy puts at stake (test/discrepancies/registry.test.ts
 * checks every entry against it):
 *   critical  the company's own cash: money owed to it that did not reach the bank (a settlement missing or
 *             short), or money that left it that nobody was owed (a payout paid twice, a debit no payout explains)
 *   high      a payment's whole amount, currency or owner is in doubt (its hold rule is payment), or a
 *             sub-merchant is not paid what it is owed (a payout missing, of another amount, returned)
 *   medium    only a difference or a delay: a fee that is not what it should be (hold rule difference), a
 *             settlement paid late, a credit from the PSP to identify
 *   low       no money is in doubt: a lost notification, a report's count, an order never paid
 */
export const SEVERITY_RULE: Readonly<Record<Severity, string>> = {
  critical: "the company's cash: money owed to it did not arrive, or money left it that nobody was owed",
  high: "a payment's whole amount, currency or owner is in doubt, or a sub-merchant is not paid what it is owed",
  medium: 'only a difference (a fee) or a delay is in doubt',
  low: 'no money is in doubt',
};

export interface Words {
  readonly en: string;
  readonly uk: string;
}

export type HoldEntry =
  | { readonly rule: 'none'; readonly inDoubt: string }
  | { readonly rule: 'payment' | 'difference'; readonly inDoubt: string; readonly reason: Words };

export const SANDBOX_SOURCES = ['scenario', 'intent', 'bank'] as const;
export type SandboxSource = (typeof SANDBOX_SOURCES)[number];

export type SandboxEntry =
  | { readonly by: SandboxSource; readonly how: string }
  | { readonly by: null; readonly why: string; readonly testedIn: string };

export interface DiscrepancyEntry {
  readonly leg: Leg;
  readonly meaning: Words;
  readonly hold: HoldEntry;
  readonly severity: Severity;
  readonly sandbox: SandboxEntry;
}

/** Every discrepancy type, in the order recon has always listed them: the PSP's, payouts, settlement, orders. */
export const DISCREPANCY_REGISTRY = {
  missing_in_report: {
    leg: 'psp',
    meaning: {
      en: "a payment the other sources show is missing from the payment provider's register",
      uk: 'платіж, який показують інші джерела, відсутній у реєстрі платіжного провайдера',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment (nothing is booked without a register row, so nothing to hold until one comes)',
      reason: {
        en: "the payment is missing from the payment provider's register",
        uk: 'платежу немає в реєстрі платіжного провайдера',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: "the register leaves the payment's row out" },
  },
  missing_in_period: {
    leg: 'psp',
    meaning: {
      en: "a payment the other sources show is missing from the payment provider's list of transactions",
      uk: 'платіж, який показують інші джерела, відсутній у переліку операцій платіжного провайдера',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: "the payment is missing from the payment provider's list of transactions",
        uk: 'платежу немає в переліку операцій платіжного провайдера',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: "the list of transactions leaves the payment's record out" },
  },
  missing_webhook: {
    leg: 'psp',
    meaning: {
      en: 'the payment provider reports a completed payment, but its notification never came, even when asked again',
      uk: 'платіжний провайдер звітує про завершений платіж, але сповіщення про нього не надійшло навіть на повторний запит',
    },
    hold: { rule: 'none', inDoubt: '— (the register and the period report agree)' },
    severity: 'low',
    sandbox: { by: 'scenario', how: 'the notification is lost for good (a re-send does not bring it)' },
  },
  status_mismatch: {
    leg: 'psp',
    meaning: {
      en: "the payment provider's reports give the payment different statuses",
      uk: 'звіти платіжного провайдера вказують різний статус платежу',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: "the payment's status differs between the payment provider's reports",
        uk: 'статус платежу різниться у звітах платіжного провайдера',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: 'the list of transactions or the notification says declined' },
  },
  amount_mismatch: {
    leg: 'psp',
    meaning: {
      en: "the payment provider's reports give the payment different amounts",
      uk: 'звіти платіжного провайдера вказують різну суму платежу',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: "the payment's amount differs between the payment provider's reports",
        uk: 'сума платежу різниться у звітах платіжного провайдера',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: 'the list of transactions or the notification gives a larger amount' },
  },
  currency_mismatch: {
    leg: 'psp',
    meaning: {
      en: "the payment provider's reports give the payment different currencies",
      uk: 'звіти платіжного провайдера вказують різну валюту платежу',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: "the payment's currency differs between the payment provider's reports",
        uk: 'валюта платежу різниться у звітах платіжного провайдера',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: 'the list of transactions or the notification gives another currency' },
  },
  fee_mismatch: {
    leg: 'psp',
    meaning: {
      en: "the payment provider's reports give the payment different fees",
      uk: 'звіти платіжного провайдера вказують різну комісію за платіж',
    },
    hold: {
      rule: 'difference',
      inDoubt: "the difference between the reports' fees, at most",
      reason: {
        en: "the fee differs between the payment provider's reports: the difference is held",
        uk: 'комісія різниться у звітах платіжного провайдера: утримано різницю',
      },
    },
    severity: 'medium',
    sandbox: { by: 'scenario', how: 'the list of transactions or the notification gives a larger fee' },
  },
  split_mismatch: {
    leg: 'psp',
    meaning: {
      en: "the receivers' shares of a split payment do not add up to the payment",
      uk: 'частки отримувачів розщепленого платежу не дорівнюють сумі платежу',
    },
    hold: {
      rule: 'payment',
      inDoubt: "the payment (every receiver's part)",
      reason: {
        en: 'the shares of the split payment do not add up to the payment',
        uk: 'частки розщепленого платежу не дорівнюють платежу',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: "the register gives one receiver's part 1.00 more" },
  },
  unknown_sub_merchant: {
    leg: 'psp',
    meaning: {
      en: 'a receiver of a split payment is not in the sub-merchant directory',
      uk: 'отримувача розщепленого платежу немає в довіднику субмерчантів',
    },
    hold: {
      rule: 'payment',
      inDoubt: "the unknown receiver's part (its statement holds everything it is owed until it is registered)",
      reason: {
        en: 'the receiver is not in the sub-merchant directory',
        uk: 'отримувача немає в довіднику субмерчантів',
      },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: 'the register pays a part to a receiver the directory does not list' },
  },
  duplicate: {
    leg: 'psp',
    meaning: {
      en: "one report gives two different rows of the same payment's receiver",
      uk: 'один звіт містить два різні рядки того самого отримувача платежу',
    },
    hold: {
      rule: 'payment',
      inDoubt: "the duplicated receiver's part",
      reason: { en: 'the payment is reported twice', uk: 'платіж повідомлено двічі' },
    },
    severity: 'high',
    sandbox: { by: 'scenario', how: "the register gives one receiver's row twice" },
  },
  report_count_mismatch: {
    leg: 'psp',
    meaning: {
      en: 'a report announces another number of rows than it gives',
      uk: 'звіт оголошує іншу кількість рядків, ніж містить',
    },
    hold: { rule: 'none', inDoubt: '— (no payment)' },
    severity: 'low',
    sandbox: { by: 'scenario', how: "one day's register announces one row more than it gives" },
  },
  payout_missing: {
    leg: 'payouts',
    meaning: {
      en: 'a payout to a sub-merchant was not paid from the bank by its due day',
      uk: 'виплату субмерчанту не сплачено з банківського рахунку до її строку',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'high',
    sandbox: { by: 'bank', how: 'the bank never pays one payout' },
  },
  payout_amount_mismatch: {
    leg: 'payouts',
    meaning: {
      en: 'a payout was paid for another amount than the statement states',
      uk: 'виплату сплачено в іншій сумі, ніж зазначено у відомості',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'high',
    sandbox: {
      by: null,
      why: 'the sandbox bank pays each payout in full or not at all; a part paid or too much is built by hand',
      testedIn: 'test/payouts/match.test.ts',
    },
  },
  payout_unexpected: {
    leg: 'payouts',
    meaning: {
      en: 'a debit of the payouts account that no payout explains',
      uk: 'списання з рахунку виплат, якого не пояснює жодна виплата',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'critical',
    sandbox: {
      by: null,
      why: "the sandbox bank debits only the payouts issued and its own charges (bank fees); a stranger's debit is built by hand",
      testedIn: 'test/payouts/match.test.ts',
    },
  },
  payout_duplicate: {
    leg: 'payouts',
    meaning: { en: 'a payout was paid twice', uk: 'виплату сплачено двічі' },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'critical',
    sandbox: { by: 'bank', how: 'the bank pays one payout again a business day later' },
  },
  payout_returned: {
    leg: 'payouts',
    meaning: {
      en: "a payout came back from the receiver's bank",
      uk: 'виплату повернув банк отримувача',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'high',
    sandbox: { by: 'bank', how: 'the bank returns one payout (account closed)' },
  },
  settlement_missing: {
    leg: 'settlement',
    meaning: {
      en: 'what the payment provider owes for a settlement day never reached the bank',
      uk: 'кошти, які платіжний провайдер винен за день розрахунку, не надійшли до банку',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'critical',
    sandbox: {
      by: null,
      why: 'the sandbox PSP pays every settlement day (one short, one late); a day never paid is built by hand',
      testedIn: 'test/settlement/settlement.test.ts',
    },
  },
  settlement_short: {
    leg: 'settlement',
    meaning: {
      en: 'the payment provider paid less than it owes for a settlement day, beyond the tolerance',
      uk: 'платіжний провайдер сплатив менше, ніж винен за день розрахунку, понад допустиме відхилення',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'critical',
    sandbox: { by: 'bank', how: "one settlement day's credit is short by a twentieth" },
  },
  settlement_late: {
    leg: 'settlement',
    meaning: {
      en: "the payment provider's settlement reached the bank after its due day",
      uk: 'розрахунок платіжного провайдера надійшов до банку після строку',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'medium',
    sandbox: { by: 'bank', how: "one settlement day's credit comes a business day late" },
  },
  settlement_unexpected: {
    leg: 'settlement',
    meaning: {
      en: 'a credit from the payment provider that no settlement day explains',
      uk: 'зарахування від платіжного провайдера, якого не пояснює жоден день розрахунку',
    },
    hold: { rule: 'none', inDoubt: '—' },
    severity: 'medium',
    sandbox: {
      by: null,
      why: 'the sandbox PSP credits only what it owes; a credit owed for no day is built by hand',
      testedIn: 'test/settlement/settlement.test.ts',
    },
  },
  settlement_recovered: {
    leg: 'settlement',
    meaning: {
      en: 'a settlement written off is no longer in doubt as written off: its money reached the bank since, the PSP owes less, or its day is owed again whole (its credit taken back by the bank, in doubt on the discrepancy of the day); the write-off is taken back by a recovery, to review',
      uk: 'розрахунок, списаний як збиток, більше не під сумнівом як списаний: його кошти відтоді надійшли до банку, PSP винен менше, або його день знову винен повністю (банк повернув його зарахування, сума під сумнівом у розбіжності самого дня); списання сторновано відшкодуванням, перевірте рішення',
    },
    hold: {
      rule: 'none',
      inDoubt:
        '— (the money came and is booked, or is in doubt on the discrepancy of its day: the write-off to review)',
    },
    severity: 'medium',
    sandbox: {
      by: null,
      why: 'the sandbox writes nothing off; a write-off followed by the money is built by hand',
      testedIn: 'test/settlement/write-off-recovered.test.ts',
    },
  },
  settlement_gain_taken_back: {
    leg: 'settlement',
    meaning: {
      en: 'a bank credit written off as a gain is no longer unexplained (it pays a settlement day, or the bank took it back): the gain is taken back, to review',
      uk: 'зарахування, списане як дохід, більше не є непоясненим (воно сплачує день розрахунку або банк його повернув): дохід сторновано, перевірте рішення',
    },
    hold: { rule: 'none', inDoubt: '— (the credit is booked once, or gone: the write-off to review)' },
    severity: 'medium',
    sandbox: {
      by: null,
      why: 'the sandbox writes nothing off; a gain written off and explained later is built by hand',
      testedIn: 'test/settlement/write-off-gain-taken-back.test.ts',
    },
  },
  order_not_at_psp: {
    leg: 'orders',
    meaning: {
      en: 'an order of the marketplace the payment provider never saw',
      uk: 'замовлення маркетплейсу, якого платіжний провайдер не отримував',
    },
    hold: { rule: 'none', inDoubt: '— (no money moved)' },
    severity: 'low',
    sandbox: { by: 'intent', how: 'the orders file gains an order the PSP never saw' },
  },
  payment_without_order: {
    leg: 'orders',
    meaning: {
      en: 'a payment matches no order of the marketplace',
      uk: 'платіж не відповідає жодному замовленню маркетплейсу',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: 'the payment matches no order of the marketplace',
        uk: 'платіж не відповідає жодному замовленню маркетплейсу',
      },
    },
    severity: 'high',
    sandbox: { by: 'intent', how: 'the orders file leaves a paid order out' },
  },
  amount_differs_from_order: {
    leg: 'orders',
    meaning: {
      en: "a payment's amount or currency is not the order's",
      uk: 'сума або валюта платежу не збігається із замовленням',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: 'the payment is not for the amount ordered',
        uk: 'сума платежу не дорівнює сумі замовлення',
      },
    },
    severity: 'high',
    sandbox: {
      by: null,
      why: 'the sandbox writes each order from its payment and changes only who is paid and how it is split; another amount is built by hand',
      testedIn: 'test/orders/orders-projection.test.ts',
    },
  },
  split_differs_from_order: {
    leg: 'orders',
    meaning: {
      en: "a payment's split between receivers is not the order's",
      uk: 'розщеплення платежу між отримувачами не відповідає замовленню',
    },
    hold: {
      rule: 'payment',
      inDoubt: 'the payment',
      reason: {
        en: 'the split of the payment is not the split ordered',
        uk: 'розщеплення платежу не відповідає замовленню',
      },
    },
    severity: 'high',
    sandbox: {
      by: 'intent',
      how: 'an order names another receiver than the one paid, another moves 1.00 between parts',
    },
  },
  fee_above_contract: {
    leg: 'orders',
    meaning: {
      en: 'the payment provider charged a fee above the fee contract',
      uk: 'платіжний провайдер стягнув комісію, вищу за договірну',
    },
    hold: {
      rule: 'difference',
      inDoubt: "the fee charged less the contract's, at most",
      reason: {
        en: 'the fee charged is above the contract: the difference is held',
        uk: 'стягнута комісія вища за договірну: утримано різницю',
      },
    },
    severity: 'medium',
    sandbox: { by: 'intent', how: 'a fee contract line 0.01 below what the PSP charges' },
  },
  fee_below_contract: {
    leg: 'orders',
    meaning: {
      en: 'the payment provider charged a fee below the fee contract',
      uk: 'платіжний провайдер стягнув комісію, нижчу за договірну',
    },
    hold: {
      rule: 'difference',
      inDoubt: "the contract's fee less the fee charged, at most",
      reason: {
        en: 'the fee charged is below the contract: the difference is held',
        uk: 'стягнута комісія нижча за договірну: утримано різницю',
      },
    },
    severity: 'medium',
    sandbox: { by: 'intent', how: 'a fee contract line 0.01 above what the PSP charges' },
  },
} as const satisfies Readonly<Record<string, DiscrepancyEntry>>;

type Registry = typeof DISCREPANCY_REGISTRY;
export type DiscrepancyType = keyof Registry;

/** The types of one leg, as a type. */
export type DiscrepancyTypeOf<L extends Leg> = {
  [K in DiscrepancyType]: Registry[K]['leg'] extends L ? K : never;
}[DiscrepancyType];

/** The types one part of the sandbox injects, as a type. */
export type InjectedBy<S extends SandboxSource> = {
  [K in DiscrepancyType]: Registry[K]['sandbox'] extends { readonly by: S } ? K : never;
}[DiscrepancyType];

export const DISCREPANCY_TYPES = Object.keys(DISCREPANCY_REGISTRY) as readonly DiscrepancyType[];

export const entryOf = (type: DiscrepancyType): DiscrepancyEntry => DISCREPANCY_REGISTRY[type];

export const isDiscrepancyType = (type: string): type is DiscrepancyType => Object.hasOwn(DISCREPANCY_REGISTRY, type);

/** The types of a leg, in the registry's order. */
export const typesOfLeg = <L extends Leg>(leg: L): readonly DiscrepancyTypeOf<L>[] =>
  DISCREPANCY_TYPES.filter((t) => entryOf(t).leg === leg) as DiscrepancyTypeOf<L>[];

/** The types one part of the sandbox injects as ground truth, in the registry's order. */
export const typesInjectedBy = <S extends SandboxSource>(by: S): readonly InjectedBy<S>[] =>
  DISCREPANCY_TYPES.filter((t) => entryOf(t).sandbox.by === by) as InjectedBy<S>[];

/** The reason a statement prints for money a type holds, per language; none for a type that holds nothing. */
export const holdReasonsOf = (language: keyof Words): Readonly<Partial<Record<DiscrepancyType, string>>> =>
  Object.fromEntries(
    DISCREPANCY_TYPES.flatMap((t) => {
      const hold = entryOf(t).hold;
      return hold.rule === 'none' ? [] : [[t, hold.reason[language]]];
    }),
  );
