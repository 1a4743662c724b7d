import type { StatementLanguage } from '../../config/statements';

/**
 * How a customer paid, in plain words: the PSP's payway (card, apple_pay, ...) and card scheme (visa, ...).
 * A value without a kept word is shown as the PSP gave it; a line no recorded event tells shows "—".
 */
const PAYWAYS: Readonly<Record<StatementLanguage, Readonly<Record<string, string>>>> = {
  en: {
    card: 'Card',
    apple_pay: 'Apple Pay',
    google_pay: 'Google Pay',
    wallet: 'Wallet',
    bank_transfer: 'Bank transfer',
    privat24: 'Privat24',
  },
  uk: {
    card: 'Картка',
    apple_pay: 'Apple Pay',
    google_pay: 'Google Pay',
    wallet: 'Гаманець',
    bank_transfer: 'Банківський переказ',
    privat24: 'Приват24',
  },
};

const SCHEMES: Readonly<Record<string, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  maestro: 'Maestro',
  prostir: 'ПРОСТІР',
  amex: 'American Express',
};

export const NO_PAYMENT_METHOD = '—';

export function paymentMethodWords(
  paidWith: { readonly payway: string | null; readonly scheme: string | null } | null | undefined,
  language: StatementLanguage,
): string {
  const payway = paidWith?.payway ? (PAYWAYS[language][paidWith.payway.toLowerCase()] ?? paidWith.payway) : null;
  const scheme = paidWith?.scheme ? (SCHEMES[paidWith.scheme.toLowerCase()] ?? paidWith.scheme) : null;
  if (payway && scheme && payway !== scheme) return `${payway} · ${scheme}`;
  return payway ?? scheme ?? NO_PAYMENT_METHOD;
}

/** The payways a card pays through, and so the ones whose words a card scheme follows ("Apple Pay · Visa"). */
const CARD_PAYWAYS = ['card', 'apple_pay', 'google_pay'];

/**
 * The widest words of a language this module writes for a known payway and scheme ("Google Pay · American
 * Express", 29 characters), so that a column sized before its lines are read holds every one of them.
 */
export function paymentMethodWidth(language: StatementLanguage): number {
  const words = [
    ...Object.keys(PAYWAYS[language]).map((payway) => paymentMethodWords({ payway, scheme: null }, language)),
    ...CARD_PAYWAYS.flatMap((payway) =>
      Object.keys(SCHEMES).map((scheme) => paymentMethodWords({ payway, scheme }, language)),
    ),
  ];
  return Math.max(...words.map((w) => w.length));
}
