import { z } from 'zod';
import { configObject } from './strict';

/**
 * Bank accounts and the rules for matching money that moved (docs/bank.md). Read from the `bank` object
 * of the file named by RECON_CONFIG. Amounts are minor units written as decimal strings.
 */

export type BankAccountRole = 'settlement' | 'payouts';

export interface BankAccount {
  /** IBAN or account number, upper case without spaces: how statements name the account */
  readonly id: string;
  readonly currency: string;
  /** settlement: the PSP pays the marketplace into it; payouts: sub-merchants are paid from it */
  readonly role: BankAccountRole;
  readonly name: string | null;
}

export interface BankConfig {
  readonly accounts: readonly BankAccount[];
  /**
   * The encoding of MT940 and CSV statement files (a WHATWG label: utf-8, windows-1252, iso-8859-1,
   * windows-1251 …); none: UTF-8, strictly. A camt.053 declares its own; a CSV mapping's `encoding` wins.
   */
  readonly encoding?: string;
  readonly settlement: {
    /** the PSP pays a day's money this many business days (of RECON_TIMEZONE) later */
    readonly lagBusinessDays: number;
    /** days that are not business days besides Saturdays and Sundays (YYYY-MM-DD) */
    readonly holidays: readonly string[];
    /** per currency: a shortfall up to this many minor units is a bank charge, not a discrepancy */
    readonly tolerance: Readonly<Record<string, bigint>>;
    /** a settlement received up to this many business days after it was due is late, beyond it missing */
    readonly lateBusinessDays: number;
  };
  readonly payouts: {
    /** a statement's amount due not paid within this many days of issue is `payout_missing` */
    readonly dueDays: number;
    /** a debit matched by payee and amount must be booked within this many days of the statement's issue */
    readonly matchWindowDays: number;
    /**
     * days the payouts bank executes no transfer besides Saturdays and Sundays (YYYY-MM-DD): a payout run's
     * execution date is never one of them. Present only when configured; none: the settlement holidays.
     */
    readonly holidays?: readonly string[];
    /**
     * the characters the payment file writes names in (src/payout-runs/charset.ts): `sepa` the EPC Latin set
     * (transliterated; a name it cannot write is left out), `utf8` as given. Present only when configured; none:
     * utf8, as files were written before it could be set.
     */
    readonly charset?: 'utf8' | 'sepa';
  };
  /** which bank transaction codes are the bank's own charges (booked as bank fees, never matched) */
  readonly charges: BankChargeCodes;
}

/**
 * The transaction codes by which a statement says a line is the bank's charge (docs/bank.md, "Bank charges"):
 * camt.053 sub-families of `BkTxCd` (any domain and family), MT940 `:61:` transaction types (`N` + code) and
 * German `:86:` business transaction codes (GVC), and exact codes of any format (a proprietary camt code, a
 * CSV column's value), compared without case or surrounding spaces. Defaults in DEFAULT_BANK_CHARGES.
 */
export interface BankChargeCodes {
  readonly camtSubFamilies: readonly string[];
  readonly mt940Types: readonly string[];
  readonly gvc: readonly string[];
  readonly codes: readonly string[];
}

/**
 * ISO 20022 external sub-families of charges (CHRG charges, COMM commission, COMT non-taxable commission,
 * FEES fees); SWIFT MT940 types NCHG (charges and other expenses) and NCOM (commission); DFÜ-Abkommen
 * Anlage 3 GVC 804-810 (standing-order fees, closing of the account's charges, postage, charges, fees,
 * commission, reminder fees).
 */
export const DEFAULT_BANK_CHARGES: BankChargeCodes = {
  camtSubFamilies: ['CHRG', 'COMM', 'COMT', 'FEES'],
  mt940Types: ['NCHG', 'NCOM'],
  gvc: ['804', '805', '806', '807', '808', '809', '810'],
  codes: [],
};

export const normalizeAccountId = (s: string): string => s.replace(/\s+/g, '').toUpperCase();

const minorString = z.string().regex(/^\d+$/, 'expected minor units as a decimal string, e.g. "500"');

export const bankConfigSchema = configObject({
  accounts: z
    .array(
      configObject({
        id: z.string().min(1),
        currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code such as UAH'),
        role: z.enum(['settlement', 'payouts']),
        name: z.string().min(1).optional(),
      }),
    )
    .default([]),
  encoding: z
    .string()
    .refine(
      (l) => {
        try {
          new TextDecoder(l.trim());
          return true;
        } catch {
          return false;
        }
      },
      { message: 'not an encoding recon can decode (e.g. utf-8, windows-1252, iso-8859-1, windows-1251)' },
    )
    .optional(),
  settlement: configObject({
    lagBusinessDays: z.number().int().min(0).max(30).default(1),
    holidays: z.array(z.iso.date()).default([]),
    tolerance: z.record(z.string().regex(/^[A-Z]{3}$/), minorString).default({}),
    lateBusinessDays: z.number().int().min(1).max(60).default(3),
  }).default({ lagBusinessDays: 1, holidays: [], tolerance: {}, lateBusinessDays: 3 }),
  payouts: configObject({
    dueDays: z.number().int().min(0).max(365).default(5),
    matchWindowDays: z.number().int().min(0).max(365).default(10),
    holidays: z.array(z.iso.date()).optional(),
    charset: z.enum(['utf8', 'sepa']).optional(),
  }).default({ dueDays: 5, matchWindowDays: 10 }),
  charges: configObject({
    camtSubFamilies: z
      .array(z.string().regex(/^[A-Za-z0-9]{1,35}$/))
      .default([...DEFAULT_BANK_CHARGES.camtSubFamilies]),
    mt940Types: z.array(z.string().regex(/^[NSFnsf][A-Za-z0-9]{3}$/)).default([...DEFAULT_BANK_CHARGES.mt940Types]),
    gvc: z.array(z.string().regex(/^\d{3}$/)).default([...DEFAULT_BANK_CHARGES.gvc]),
    codes: z.array(z.string().trim().min(1).max(100)).default([]),
  }).default({
    camtSubFamilies: [...DEFAULT_BANK_CHARGES.camtSubFamilies],
    mt940Types: [...DEFAULT_BANK_CHARGES.mt940Types],
    gvc: [...DEFAULT_BANK_CHARGES.gvc],
    codes: [],
  }),
});

export const EMPTY_BANK_CONFIG: BankConfig = bankConfigFrom(bankConfigSchema.parse({}));

export function bankConfigFrom(raw: z.infer<typeof bankConfigSchema>): BankConfig {
  return {
    accounts: raw.accounts.map((a) => ({
      id: normalizeAccountId(a.id),
      currency: a.currency,
      role: a.role,
      name: a.name ?? null,
    })),
    ...(raw.encoding === undefined ? {} : { encoding: raw.encoding.trim() }),
    settlement: {
      lagBusinessDays: raw.settlement.lagBusinessDays,
      holidays: [...raw.settlement.holidays].sort(),
      tolerance: Object.fromEntries(Object.entries(raw.settlement.tolerance).map(([c, v]) => [c, BigInt(v)])),
      lateBusinessDays: raw.settlement.lateBusinessDays,
    },
    payouts: {
      dueDays: raw.payouts.dueDays,
      matchWindowDays: raw.payouts.matchWindowDays,
      ...(raw.payouts.holidays === undefined ? {} : { holidays: [...new Set(raw.payouts.holidays)].sort() }),
      ...(raw.payouts.charset === undefined ? {} : { charset: raw.payouts.charset }),
    },
    charges: {
      camtSubFamilies: [...new Set(raw.charges.camtSubFamilies.map((c) => c.toUpperCase()))].sort(),
      mt940Types: [...new Set(raw.charges.mt940Types.map((c) => c.toUpperCase()))].sort(),
      gvc: [...new Set(raw.charges.gvc)].sort(),
      codes: [...new Set(raw.charges.codes.map((c) => c.trim().toUpperCase()))].sort(),
    },
  };
}

/** Problems a schema cannot see: one account configured twice. */
export function bankConfigIssues(config: BankConfig): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  config.accounts.forEach((a, n) => {
    if (seen.has(a.id)) out.push(`bank.accounts.${n}.id: account ${a.id} is configured twice`);
    seen.add(a.id);
  });
  return out;
}

/** The days a payout run's transfers cannot be executed on besides weekends: the payouts bank's holidays. */
export function executionHolidays(bank: BankConfig | undefined): ReadonlySet<string> {
  return new Set(bank?.payouts.holidays ?? bank?.settlement.holidays ?? []);
}
