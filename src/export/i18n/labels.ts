import type { StatementLanguage } from '../../config/statements';
import { DISCREPANCY_TYPES, entryOf } from '../../reconciliation/discrepancies/registry';

/**
 * Every word a sub-merchant reads on its statement (PDF and workbook pages), in English and Ukrainian. Plain
 * finance words only: nothing of how recon computes (no store, cut or hash words). Finance's own Payouts index
 * stays in English.
 */

/**
 * A count with its noun in the form the language's plural rules choose (en: 1 line, 2 lines; uk: 1 рядок,
 * 2 рядки, 5 рядків, 21 рядок), so a total never reads "1 lines".
 */
export function counted(locale: string, forms: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }) {
  const rules = new Intl.PluralRules(locale);
  return (n: number) => `${n} ${forms[rules.select(n)] ?? forms.other}`;
}
const lines = {
  en: counted('en-GB', { one: 'line', other: 'lines' }),
  uk: counted('uk-UA', { one: 'рядок', few: 'рядки', many: 'рядків', other: 'рядка' }),
};

const en = {
  title: 'Payout statement',
  summary: 'Summary',
  statementNo: 'Statement no.',
  pageOf: 'Page &P of &N',
  draft: 'DRAFT — not issued',
  issuedOn: 'Issued on',
  corrects: 'Corrects',
  correctsText: (no: string, day: string) => `Statement no. ${no} issued on ${day}`,
  period: 'Period',
  timeZone: 'time zone',
  issuer: 'Issued by',
  recipient: 'Sub-merchant',
  accountId: 'Account id',
  notRegistered: 'not registered as a sub-merchant',
  taxId: 'Tax id',
  address: 'Address',
  contact: 'Contact',
  disputes: 'Disputes',
  amountsNote: 'Amounts in the currency of each column',
  openingFrom: 'Opening from',
  openingPrevious: (m: string) => `the statement of ${m}`,
  openingNone: 'no statement issued before',
  neverIssued: (m: string) => `the statement of ${m} was never issued`,
  bridge: 'Payout bridge',
  check: 'Check: opening + adjustments + net payable − paid out − closing (must be 0)',
  checkGap: 'Check: opening + adjustments + months never stated + net payable − paid out − closing (must be 0)',
  operations: 'Operations',
  operationsIn: (c: string) => `Operations ${c}`,
  payoutReference: 'Payout reference (in the transfer)',
  date: 'Date and time',
  day: 'Date',
  order: 'Order',
  payment: 'Payment',
  method: 'Type',
  status: 'Status',
  share: 'Share',
  fee: 'Fee',
  paidWith: 'Paid with',
  fixedFee: 'Fee, fixed part',
  percentFee: 'Fee, percentage part',
  feeParts: 'Fixed + % fee',
  feeNotSplit: 'Fee not split by the payment provider',
  reserve: 'Reserve',
  net: 'Net',
  total: 'Total',
  totalLines: (n: number) => `Total (${lines.en(n)})`,
  reserveSheet: 'Reserve schedule',
  reserveBalance: 'Reserve balance at the end of the period',
  releasesToCome: 'Releases to come',
  heldOn: 'Held on',
  releaseOn: 'Release on',
  held: 'Held',
  released: 'Released',
  currency: 'Currency',
  monthTotal: 'Total of the month (held in it, released in it)',
  heldSheet: 'Held pending investigation',
  heldCase: 'Discrepancy id',
  reason: 'Reason',
  amountHeld: 'Amount held',
  paidOutSheet: 'Paid out',
  bookedOn: 'Paid on',
  reference: 'Payout reference',
  amountPaid: 'Amount (− returned)',
  payoutStatusSheet: 'Payouts and the bank',
  statementMonth: 'Statement month',
  amountAsked: 'Amount to pay',
  payoutStatus: 'Status',
  paidAmount: 'Paid (− returned)',
  dueBy: 'Due by',
  bankReference: 'Bank reference',
  paidTo: 'Paid to account',
  statusExpected: 'expected',
  statusPaid: 'paid',
  statusPartial: 'paid in part',
  statusMissing: 'not paid by the due day',
  statusReturned: 'returned by the bank',
  statusDuplicated: 'paid twice',
  none: 'none',
  adjustments: 'Adjustments',
  notStated: 'Not stated before',
  entry: 'Entry',
  page: 'page',
  of: 'of',
};

export type Labels = { readonly [K in keyof typeof en]: (typeof en)[K] };

const uk: Labels = {
  title: 'Виплатна виписка',
  summary: 'Підсумок',
  statementNo: 'Виписка №',
  pageOf: 'Сторінка &P з &N',
  draft: 'ЧЕРНЕТКА — не видана',
  issuedOn: 'Дата видачі',
  corrects: 'Виправляє',
  correctsText: (no: string, day: string) => `виписку № ${no} від ${day}`,
  period: 'Період',
  timeZone: 'часовий пояс',
  issuer: 'Видавець',
  recipient: 'Субмерчант',
  accountId: 'Ідентифікатор',
  notRegistered: 'не зареєстрований як субмерчант',
  taxId: 'Податковий номер',
  address: 'Адреса',
  contact: 'Контакти',
  disputes: 'Оскарження',
  amountsNote: 'Суми у валюті кожного стовпця',
  openingFrom: 'Початкове сальдо з',
  openingPrevious: (m: string) => `виписки за ${m}`,
  openingNone: 'раніше виписок не було',
  neverIssued: (m: string) => `виписку за ${m} не видавали`,
  bridge: 'Розрахунок виплати',
  check: 'Перевірка: початкове + коригування + до виплати − виплачено − кінцеве (має бути 0)',
  checkGap: 'Перевірка: початкове + коригування + невідображені місяці + до виплати − виплачено − кінцеве (має бути 0)',
  operations: 'Операції',
  operationsIn: (c: string) => `Операції в ${c}`,
  payoutReference: 'Призначення платежу (у переказі)',
  date: 'Дата і час',
  day: 'Дата',
  order: 'Замовлення',
  payment: 'Платіж',
  method: 'Тип',
  status: 'Статус',
  share: 'Частка',
  fee: 'Комісія',
  paidWith: 'Спосіб оплати',
  fixedFee: 'Комісія, фіксована частина',
  percentFee: 'Комісія, відсоткова частина',
  feeParts: 'Фікс. + % ком.',
  feeNotSplit: 'Комісія без розбивки від платіжного провайдера',
  reserve: 'Резерв',
  net: 'Нетто',
  total: 'Разом',
  totalLines: (n: number) => `Разом (${lines.uk(n)})`,
  reserveSheet: 'Графік резерву',
  reserveBalance: 'Залишок резерву на кінець періоду',
  releasesToCome: 'Майбутні повернення резерву',
  heldOn: 'Дата утримання',
  releaseOn: 'Дата повернення',
  held: 'Утримано',
  released: 'Повернуто',
  currency: 'Валюта',
  monthTotal: 'Разом за місяць (утримано, повернуто)',
  heldSheet: 'Утримано до з’ясування',
  heldCase: 'Справа',
  reason: 'Причина',
  amountHeld: 'Утримана сума',
  paidOutSheet: 'Виплачено',
  bookedOn: 'Дата виплати',
  reference: 'Призначення платежу',
  amountPaid: 'Сума (− повернено)',
  payoutStatusSheet: 'Виплати й банк',
  statementMonth: 'Місяць виписки',
  amountAsked: 'Сума до виплати',
  payoutStatus: 'Стан',
  paidAmount: 'Виплачено (− повернено)',
  dueBy: 'Строк виплати',
  bankReference: 'Референс банку',
  paidTo: 'Рахунок отримувача',
  statusExpected: 'очікується',
  statusPaid: 'виплачено',
  statusPartial: 'виплачено частково',
  statusMissing: 'не виплачено в строк',
  statusReturned: 'повернено банком',
  statusDuplicated: 'виплачено двічі',
  none: 'немає',
  adjustments: 'Коригування',
  notStated: 'Не відображено раніше',
  entry: 'Запис',
  page: 'сторінка',
  of: 'з',
};

export const LABELS: Readonly<Record<StatementLanguage, Labels>> = { en, uk };

/** A day (YYYY-MM-DD) as a document in the language writes it in text: 27.11.2026 in uk, the ISO day in en. */
export function writtenDay(iso: string, language: StatementLanguage): string {
  return language === 'uk' ? iso.split('-').reverse().join('.') : iso;
}

/** The bridge's lines in each language (keys of src/export/statements/figures.ts's BRIDGE). */
export const BRIDGE_LABELS: Readonly<Record<StatementLanguage, Readonly<Record<string, string>>>> = {
  en: {},
  uk: {
    opening: 'Початкове сальдо (кінцеве сальдо попередньої виписки)',
    adjustments: '± Коригування попередніх місяців (аркуш «Коригування»)',
    notStated: '± Місяці, не відображені раніше (аркуш «Не відображено раніше»)',
    gross: '+ Продажі (частки)',
    refunds: '− Повернення коштів',
    chargebacks: '− Чарджбеки',
    fees: '− Комісії',
    reserveHeld: '− Утримано в резерв',
    reserveReleased: '+ Повернуто з резерву',
    net: '= До виплати (сума шести рядків вище)',
    held: '− Утримано до з’ясування',
    releasedHold: '+ Звільнено з утримання (утримане в попередній виписці)',
    due: '= Сума до сплати (коригування + до виплати − утримано + звільнено)',
    dueGap: '= Сума до сплати (коригування + невідображені місяці + до виплати − утримано + звільнено)',
    broughtForward: '− Перенесено з попередніх виписок (ваша заборгованість)',
    dueOwed: '= Сума до сплати (коригування + до виплати − утримано + звільнено − перенесено)',
    dueGapOwed:
      '= Сума до сплати (коригування + невідображені місяці + до виплати − утримано + звільнено − перенесено)',
    askedBefore: '− Уже заявлено у виправленій виписці',
    dueCorrection: '= Сума до сплати за цим виправленням',
    carriedForward: 'Переноситься до наступної виписки (ваша заборгованість)',
    paidOut: '− Виплачено (аркуш «Виплачено»: дати й призначення платежу)',
    closing: 'Кінцеве сальдо (початкове + коригування + до виплати − виплачено)',
    closingGap: 'Кінцеве сальдо (початкове + коригування + невідображені місяці + до виплати − виплачено)',
  },
};

/**
 * The bridge's lines that point the reader to a part of the statement, as the PDF words them: a PDF has no sheets.
 * Held items and payouts are tables further down the PDF; adjustments and months never stated are listed only in
 * the workbook sent with it.
 */
export const PDF_BRIDGE_LABELS: Readonly<Record<StatementLanguage, Readonly<Record<string, string>>>> = {
  en: {
    adjustments: '± Adjustments to earlier months (listed in the Excel statement)',
    notStated: '± Months never stated before (listed in the Excel statement)',
    held: '− Held pending investigation (listed below)',
    paidOut: '− Paid out (listed below with dates and payout references)',
  },
  uk: {
    adjustments: '± Коригування попередніх місяців (перелік у виписці Excel)',
    notStated: '± Місяці, не відображені раніше (перелік у виписці Excel)',
    paidOut: '− Виплачено (перелік нижче: дати й призначення платежу)',
  },
};

/** Locale of Intl and luxon for a language. */
export const LOCALE: Readonly<Record<StatementLanguage, string>> = { en: 'en-GB', uk: 'uk-UA' };

/** Excel formats of a language: the workbook keeps real dates, shown in the reader's custom. */
export const XLSX_DATE: Readonly<Record<StatementLanguage, { day: string; time: string }>> = {
  en: { day: 'yyyy-mm-dd', time: 'yyyy-mm-dd hh:mm:ss' },
  uk: { day: 'dd.mm.yyyy', time: 'dd.mm.yyyy hh:mm:ss' },
};

/**
 * Why money is held (src/export/payouts/holds.ts gives it in English), in Ukrainian: a discrepancy type's reason from
 * the registry of types (src/reconciliation/discrepancies/registry.ts), and the reasons that are no type's.
 */
const HOLD_REASONS_UK: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    DISCREPANCY_TYPES.flatMap((t) => {
      const hold = entryOf(t).hold;
      return hold.rule === 'none' ? [] : [[hold.reason.en, hold.reason.uk]];
    }),
  ),
  'the receiver is not registered as a sub-merchant: nothing is paid until it is':
    'отримувач не зареєстрований як субмерчант: до реєстрації виплат немає',
  'under investigation': 'з’ясовується',
  'a record of the payment could not be processed: under investigation':
    'запис про платіж не вдалося обробити: з’ясовується',
};

/**
 * What a review added to a reason: kept withheld, released up to the amount accepted with more in doubt since
 * (src/export/payouts/holds.ts `MORE_IN_DOUBT`), or paid with the payment grown since (`PAYMENT_CHANGED`), in
 * Ukrainian.
 */
const REVIEWED_UK: ReadonlyArray<readonly [string, string]> = [
  [' (reviewed: withheld)', ' (розглянуто: утримано)'],
  [
    ' (reviewed: released as accepted; more in doubt since)',
    ' (розглянуто: виплачено прийняту суму; понад неї під сумнівом)',
  ],
  [
    ' (reviewed: paid as it was then; the payment changed since it was reviewed)',
    ' (розглянуто: виплачено як тоді; платіж змінився після розгляду)',
  ],
];

/** A held item's reason in a statement's language (as given when no translation is kept). */
export function holdReason(reason: string, language: StatementLanguage): string {
  if (language === 'en') return reason;
  const [en, suffix] = REVIEWED_UK.find(([x]) => reason.endsWith(x)) ?? ['', ''];
  const uk = HOLD_REASONS_UK[reason.slice(0, reason.length - en.length)];
  return uk ? `${uk}${suffix}` : reason;
}

/** The PSP's operation types and statuses as a Ukrainian reader says them (an unknown word as given). */
const WORDS_UK: Readonly<Record<string, string>> = {
  auth: 'авторизація',
  purchase: 'оплата',
  capture: 'списання',
  void: 'скасування',
  p2p: 'переказ',
  credit: 'зарахування',
  lookup: 'перевірка',
  refund: 'повернення',
  dispute: 'спір',
  recurrent: 'регулярний платіж',
  chargeback: 'чарджбек',
  init: 'створено',
  pending: 'в обробці',
  success: 'успішно',
  failure: 'неуспішно',
};

export const operationWord = (word: string, language: StatementLanguage): string =>
  language === 'uk' ? (WORDS_UK[word] ?? word) : word;

const STATUSES = new Set(['init', 'pending', 'success', 'failure']);
const longest = (words: readonly string[]) => Math.max(...words.map((w) => w.length));

/**
 * The widest known operation type and status in a language, so that their columns are sized for the words the
 * statement prints ("регулярний платіж" is 17 characters where "recurrent" is 9), not for the English ones.
 */
export const operationWordWidths = (language: StatementLanguage): { type: number; status: number } => {
  const words = Object.keys(WORDS_UK);
  return {
    type: longest(words.filter((w) => !STATUSES.has(w)).map((w) => operationWord(w, language))),
    status: longest(words.filter((w) => STATUSES.has(w)).map((w) => operationWord(w, language))),
  };
};

/** A journal entry's kind as the Adjustments sheet names it: never recon's code (`reserve_release`). */
const ENTRY_WORDS: Readonly<Record<StatementLanguage, Readonly<Record<string, string>>>> = {
  en: { settlement: 'operation', reversal: 'reversal', reserve_release: 'reserve released' },
  uk: { settlement: 'операція', reversal: 'сторнування', reserve_release: 'повернення з резерву' },
};

export const entryWord = (kind: string, language: StatementLanguage): string =>
  ENTRY_WORDS[language][kind] ?? kind.replace(/_/g, ' ');

/** The widest entry word of a language (the Adjustments sheet's Entry column is sized for it). */
export const entryWordWidth = (language: StatementLanguage): number => longest(Object.values(ENTRY_WORDS[language]));
