import { DateTime } from 'luxon';
import { currencyDecimals, formatMinor } from '../money';

/**
 * The console's words in English and Ukrainian, and how it writes money and time: money from bigint minor units
 * through a decimal string (Intl formats a string exactly: no float touches it), times in the business time zone.
 */

export const LANGUAGES = ['en', 'uk'] as const;
export type Language = (typeof LANGUAGES)[number];

const en = {
  title: 'recon console',
  skip: 'Skip to content',
  overview: 'Overview',
  exceptions: 'Exceptions',
  payment: 'Payment',
  order: 'Order',
  subMerchant: 'Sub-merchant',
  subMerchants: 'Sub-merchants',
  statements: 'Statements',
  statementRuns: 'Statement runs issued',
  payoutRuns: 'Payout runs',
  jobs: 'Jobs',
  logout: 'Log out',
  login: 'Log in',
  token: 'Your token',
  loginHint: 'Paste the token recon users add gave you. It is exchanged for a session; the token itself is not kept.',
  loginFailed: 'That token is not valid (unknown, rotated or revoked).',
  tooMany: 'Too many failed attempts: wait a minute and try again.',
  signedInAs: 'Signed in as',
  language: 'Language',
  matchRate: 'Match rate per leg',
  leg: 'Leg',
  total: 'Total',
  open: 'Open',
  rate: 'Without open discrepancy',
  openByType: 'Open discrepancies by type',
  openBySeverity: 'Open by severity',
  openByAge: 'Open by age',
  inDoubt: 'Money in doubt (open discrepancies)',
  held: 'Money held from payouts now',
  currency: 'Currency',
  amount: 'Amount',
  lastRuns: 'Last run of each job',
  job: 'Job',
  status: 'Status',
  started: 'Started',
  finished: 'Finished',
  trigger: 'Trigger',
  error: 'Error',
  never: 'never run',
  cashBridge: 'Cash per bank account',
  account: 'Account',
  type: 'Type',
  severity: 'Severity',
  age: 'Age',
  count: 'Count',
  filter: 'Filter',
  any: 'any',
  minAmount: 'Minimum amount (minor units)',
  minAgeDays: 'Older than (days)',
  sort: 'Sort',
  sortOldest: 'oldest first',
  sortNewest: 'newest first',
  next: 'Next page',
  first: 'First page',
  noRows: 'Nothing matches.',
  detected: 'Detected',
  occurred: 'Occurred',
  receiver: 'Receiver',
  paymentId: 'Payment id',
  show: 'Show',
  timeline: 'Timeline (every event, in commit order)',
  operations: 'Operations',
  discrepancies: 'Discrepancies',
  related: 'Journal and read models',
  notFound: 'Nothing is known about this reference.',
  balances: 'Balances',
  payable: 'Payable',
  reserve: 'Reserve',
  fees: 'Fees',
  reserveSchedule: 'Reserve schedule',
  heldOn: 'Held on',
  releaseOn: 'Release on',
  released: 'Released',
  holds: 'Holds',
  payoutsToBank: 'Payouts and what the bank did',
  statementReference: 'Statement reference',
  paidOut: 'Paid out',
  paidOn: 'Paid on',
  bankRef: 'Bank reference',
  reason: 'Reason',
  month: 'Month',
  issued: 'Issued',
  files: 'Files',
  runNow: 'Run now',
  ran: 'Run started',
  forbidden: 'You may not do that.',
  csrf: 'The form has expired or was not sent by this console. Reload the page and try again.',
  notUtf8: 'The form holds text that is not UTF-8: nothing was changed. Type the text again and send it.',
  tooLarge: 'The form is larger than the console takes (64 KiB): shorten the text and send it again.',
  history: 'History',
  name: 'Name',
  id: 'Id',
  scheduled: 'Scheduled for',
  worker: 'Worker',
  noData: 'No data yet: run the projections (recon project) first.',
  opening: 'Opening (first statement)',
  journal: 'Booked in the journal',
  notInJournal: 'On the statements, not booked',
  bankClosing: 'Bank closing',
  difference: 'Difference',
  legs: { psp: 'PSP sources', orders: 'Orders', payouts: 'Payouts × bank', settlement: 'Settlements × bank' },
};
export type Words = typeof en;

const uk: Words = {
  title: 'Консоль recon',
  skip: 'Перейти до змісту',
  overview: 'Огляд',
  exceptions: 'Розбіжності',
  payment: 'Платіж',
  order: 'Замовлення',
  subMerchant: 'Субмерчант',
  subMerchants: 'Субмерчанти',
  statements: 'Виписки',
  statementRuns: 'Випущені пакети виписок',
  payoutRuns: 'Пакети виплат',
  jobs: 'Завдання',
  logout: 'Вийти',
  login: 'Увійти',
  token: 'Ваш токен',
  loginHint: 'Вставте токен, виданий recon users add. Його обмінюють на сесію; сам токен не зберігається.',
  loginFailed: 'Цей токен недійсний (невідомий, замінений або відкликаний).',
  tooMany: 'Забагато невдалих спроб: зачекайте хвилину й спробуйте знову.',
  signedInAs: 'Ви увійшли як',
  language: 'Мова',
  matchRate: 'Частка зіставлених за ділянками',
  leg: 'Ділянка',
  total: 'Усього',
  open: 'Відкриті',
  rate: 'Без відкритих розбіжностей',
  openByType: 'Відкриті розбіжності за типом',
  openBySeverity: 'Відкриті за важливістю',
  openByAge: 'Відкриті за віком',
  inDoubt: 'Сума під сумнівом (відкриті розбіжності)',
  held: 'Утримано з виплат зараз',
  currency: 'Валюта',
  amount: 'Сума',
  lastRuns: 'Останній запуск кожного завдання',
  job: 'Завдання',
  status: 'Стан',
  started: 'Початок',
  finished: 'Кінець',
  trigger: 'Запуск',
  error: 'Помилка',
  never: 'ще не запускалося',
  cashBridge: 'Кошти за банківськими рахунками',
  account: 'Рахунок',
  type: 'Тип',
  severity: 'Важливість',
  age: 'Вік',
  count: 'Кількість',
  filter: 'Фільтрувати',
  any: 'будь-який',
  minAmount: 'Мінімальна сума (у копійках)',
  minAgeDays: 'Старші за (днів)',
  sort: 'Порядок',
  sortOldest: 'спершу старші',
  sortNewest: 'спершу новіші',
  next: 'Наступна сторінка',
  first: 'Перша сторінка',
  noRows: 'Нічого не знайдено.',
  detected: 'Виявлено',
  occurred: 'Відбулося',
  receiver: 'Отримувач',
  paymentId: 'Ідентифікатор платежу',
  show: 'Показати',
  timeline: 'Хронологія (усі події в порядку запису)',
  operations: 'Операції',
  discrepancies: 'Розбіжності',
  related: 'Журнал і моделі читання',
  notFound: 'Про це посилання нічого не відомо.',
  balances: 'Сальдо',
  payable: 'До виплати',
  reserve: 'Резерв',
  fees: 'Комісії',
  reserveSchedule: 'Графік резерву',
  heldOn: 'Утримано',
  releaseOn: 'Повернення',
  released: 'Повернуто',
  holds: 'Утримання',
  payoutsToBank: 'Виплати і що зробив банк',
  statementReference: 'Номер виписки',
  paidOut: 'Сплачено',
  paidOn: 'Дата оплати',
  bankRef: 'Референс банку',
  reason: 'Причина',
  month: 'Місяць',
  issued: 'Видано',
  files: 'Файли',
  runNow: 'Запустити зараз',
  ran: 'Запуск розпочато',
  forbidden: 'Вам це не дозволено.',
  csrf: 'Форма застаріла або надіслана не цією консоллю. Оновіть сторінку й спробуйте знову.',
  notUtf8: 'Форма містить текст не в UTF-8: нічого не змінено. Введіть текст знову й надішліть.',
  tooLarge: 'Форма більша, ніж приймає консоль (64 КіБ): скоротіть текст і надішліть знову.',
  history: 'Історія',
  name: 'Назва',
  id: 'Ідентифікатор',
  scheduled: 'Заплановано на',
  worker: 'Виконавець',
  noData: 'Даних ще немає: спершу запустіть проєкції (recon project).',
  opening: 'Початкове сальдо (перша виписка)',
  journal: 'Проведено в журналі',
  notInJournal: 'У виписках, не проведено',
  bankClosing: 'Кінцеве сальдо банку',
  difference: 'Різниця',
  legs: { psp: 'Джерела PSP', orders: 'Замовлення', payouts: 'Виплати × банк', settlement: 'Розрахунки × банк' },
};

export const WORDS: Readonly<Record<Language, Words>> = { en, uk };

/** The language: the user's choice (a cookie) first, then the browser's Accept-Language, else English. */
export function languageOf(choice: string | undefined, acceptLanguage: string | undefined): Language {
  if (choice === 'uk' || choice === 'en') return choice;
  const tags = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^q=([\d.]+)$/.exec(p.trim())?.[1]).find((x) => x !== undefined);
      return { tag: tag ?? '', q: q === undefined ? 1 : Number(q) };
    })
    .filter((t) => t.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const t of tags) {
    if (t.tag.startsWith('uk')) return 'uk';
    if (t.tag.startsWith('en')) return 'en';
  }
  return 'en';
}

const LOCALE: Record<Language, string> = { en: 'en-GB', uk: 'uk-UA' };

const formats = new Map<string, Intl.NumberFormat>();

/** One formatter per language and currency: making one costs far more than formatting with it. */
function formatOf(lang: Language, currency: string | null): Intl.NumberFormat {
  const key = `${lang}:${currency ?? ''}`;
  let f = formats.get(key);
  if (!f) {
    // never fewer decimals than the amount has: a currency without minor units still shows hundredths it was given;
    // the currency's own from ISO 4217, not ICU's display digits (0 for HUF: 1,234.50 HUF shown "1,234.5")
    const own = currency === null ? 2 : currencyDecimals(currency);
    f =
      currency === null
        ? new Intl.NumberFormat(LOCALE[lang], { minimumFractionDigits: 2 })
        : new Intl.NumberFormat(LOCALE[lang], {
            style: 'currency',
            currency,
            minimumFractionDigits: own,
            maximumFractionDigits: Math.max(2, own),
          });
    formats.set(key, f);
  }
  return f;
}

/** Minor units (hundredths) in the currency's own format for the language: exact, from a decimal string. */
export function money(minor: bigint, currency: string | null, lang: Language): string {
  const code = currency && /^[A-Z]{3}$/.test(currency) ? currency : null;
  // Intl formats a decimal string exactly (no float): typed as number only in TypeScript's lib
  return formatOf(lang, code).format(formatMinor(minor) as unknown as number);
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A time in the business time zone, to the minute, as the language writes it. Luxon only places it in the zone;
 * the digits are written here (its locale-aware formatting cost most of a page's time).
 */
export function when(at: Date | string | null, zone: string, lang: Language): string {
  if (at === null) return '–';
  const d = typeof at === 'string' ? DateTime.fromISO(at, { zone }) : DateTime.fromJSDate(at, { zone });
  if (!d.isValid) return String(at);
  const time = `${pad(d.hour)}:${pad(d.minute)}`;
  return lang === 'uk'
    ? `${pad(d.day)}.${pad(d.month)}.${d.year} ${time}`
    : `${d.year}-${pad(d.month)}-${pad(d.day)} ${time}`;
}
