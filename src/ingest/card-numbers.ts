import { holdsCardNumber, maskPans } from '../input-rules';
import { MAX_JSON_DEPTH } from '../psp/json';

/**
 * Card numbers never reach the event store (README, "Reliability and security"). A PSP sends them masked
 * (`cc_mask`: first six and last four digits), but one that does not mask (a test project, a fault), or a customer
 * who types a card number into a description, would put a whole number into an observation. Before an
 * observation's event is built, every run of 13 to 19 digits (whole, or grouped by spaces or dashes as cards are
 * printed) that passes the card-number check digit (Luhn) is masked to its first six and last four digits, as a PSP masks:
 *
 * - in the recorded text (`raw`), inside JSON string values only (a number is left as it is, so the text stays
 *   valid JSON and its amounts exact), and anywhere in a refused payload's text;
 * - in the normalized record, only in the fields that carry card or free text (CARD_TEXT_FIELDS), never in an
 *   id the matching reads (a numeric transaction id of that shape stays whole there).
 *
 * The card token (`cc_token`) is masked too, in both: the PSP accepts it in place of the card for a new payment
 * (psp-interface.md 2.1), so whoever reads it can charge the card through the marketplace's account, and recon's
 * reconciliation never reads it. Its wallet prefix (text ending in a colon) and last four characters are kept,
 * enough to tell two tokens apart when a payer asks.
 *
 * The event id is made from the masked content: the same delivery masked the same way is the same id.
 */

/**
 * The fields of a record or webhook (and of its `other`) whose text is masked: a register row's `payway` among
 * them, which no matching reads and a statement prints word for word when it is no payway recon knows.
 */
const CARD_TEXT_FIELDS: ReadonlySet<string> = new Set([
  'cc_mask',
  'cardMask',
  'description',
  'status_description',
  'payload',
  'payway',
]);

/** The fields whose whole value is a card token. */
const CARD_TOKEN_FIELDS: ReadonlySet<string> = new Set(['cc_token']);

// a token's value in a JSON text: the key, then its string (escapes kept whole), to its closing quote or to the
// end of a refused payload cut short
const TOKEN_IN_JSON = /("cc_token"\s*:\s*")((?:[^"\\]|\\.)*)("|\\?$)/g;

/** A card token masked: its wallet prefix (`applepay:`) and last four characters kept, the rest starred. */
export function maskCardToken(token: string): string {
  const prefix = /^[A-Za-z_-]{1,20}:/.exec(token)?.[0] ?? '';
  const rest = token.slice(prefix.length);
  if (rest === '' || /^\*+.{0,4}$/.test(rest)) return token;
  return `${prefix}${'*'.repeat(Math.max(4, rest.length - 4))}${rest.length > 8 ? rest.slice(-4) : ''}`;
}

/** A JSON text (or a refused payload's text) with the value of every `cc_token` masked. */
function maskCardTokensInText(raw: string): string {
  if (!raw.includes('"cc_token"')) return raw;
  // an escaped value is masked whole: its escapes would otherwise be cut in half
  return raw.replace(
    TOKEN_IN_JSON,
    (_m, head: string, value: string, end: string) =>
      `${head}${value.includes('\\') || end !== '"' ? '*'.repeat(8) : maskCardToken(value)}${end === '"' ? '"' : ''}`,
  );
}

/** `text` with every card number in it masked (first six, last four digits), and any card token. */
export function maskCardNumbers(text: string): string {
  const t = maskCardTokensInText(text);
  // a refused payload may still be JSON whose strings hide a card number behind escapes
  return maskPans(ESCAPED_CARD_CHAR.test(t) ? maskCardNumbersInJson(t) : t);
}

// an escaped digit or separator (`\u0034`, `\u0020`, `\u002d`, `\u00a0`, `\u202f`): a card number's shape may hide behind it
const ESCAPED_CARD_CHAR = /\\u(?:00(?:3[0-9]|20|2[dD]|5[fF]|[aA]0)|20(?:0[79]|2[fF]))/;

/** A JSON text with the card numbers inside its string values masked; numbers, keys' places and layout kept. */
export function maskCardNumbersInJson(json: string): string {
  const raw = maskCardTokensInText(json);
  // most records hold none (their 13-digit epoch milliseconds are numbers, never masked): the text itself,
  // without rebuilding it string by string (issue 26: a rebuilt copy per record, hashed and stored)
  // a digit, space or dash written as an escape (`\u0034111…`) hides the number's shape from the text itself
  const escaped = ESCAPED_CARD_CHAR.test(raw);
  if (!escaped && !holdsCardNumber(raw)) return raw;
  let out = '';
  let from = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '"') continue;
    let end = i + 1;
    while (end < raw.length && raw[end] !== '"') end += raw[end] === '\\' ? 2 : 1;
    const value = raw.slice(i + 1, end);
    out += raw.slice(from, i + 1) + (escaped && ESCAPED_CARD_CHAR.test(value) ? maskedEscaped(value) : maskPans(value));
    from = end;
    i = end;
  }
  return out + raw.slice(from);
}

/** A JSON string's text with escapes: decoded, and written again masked when it holds a card number. */
function maskedEscaped(value: string): string {
  let decoded: unknown;
  try {
    decoded = JSON.parse(`"${value}"`);
  } catch {
    return maskPans(value);
  }
  if (typeof decoded !== 'string' || !holdsCardNumber(decoded)) return maskPans(value);
  return JSON.stringify(maskPans(decoded)).slice(1, -1);
}

/**
 * The fields of a record's `other` that keep a card number's shape: the ids a projection or the receiver reads
 * there (operations-seen's transaction id, the webhook's `pos_id`). Every other text of `other` is masked, at any
 * depth: `other` holds whatever the PSP sends beyond the mapped fields (`recipientCardMask`, `customer_id`,
 * `receipt_url`, a field it adds tomorrow), which no matching reads, and the recorded text masks them all.
 */
const OTHER_IDS: ReadonlySet<string> = new Set(['transactionId', 'transaction_id', 'pos_id']);

/** `v` with the card numbers in its strings (values and member names) masked, at any depth; the same value when none is. */
function withPansMasked(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return holdsCardNumber(v) ? maskPans(v) : v;
  if (depth > MAX_JSON_DEPTH || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const items = v.map((x) => withPansMasked(x, depth + 1));
    return items.some((x, i) => x !== v[i]) ? items : v;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const m = depth === 0 && OTHER_IDS.has(k) ? x : withPansMasked(x, depth + 1);
    // a member name may be a card number too (cards keyed by number), as the recorded text masks it; most names
    // are shorter than any card number and are not looked into
    const name = k.length >= 13 && holdsCardNumber(k) ? maskPans(k) : k;
    if (m !== x || name !== k) changed = true;
    out[name] = m;
  }
  return changed ? out : v;
}

/** A record's card and free-text fields masked (its own, and every text of its `other` but the ids read there). */
function withCardNumbersMasked<T extends { other: Record<string, unknown> }>(record: T): T {
  const other = withPansMasked(record.other) as Record<string, unknown>;
  if (!someCardTextMasked(record) && other === record.other) return record;
  const own: Record<string, unknown> = { ...record };
  for (const k of Object.keys(own))
    if (CARD_TEXT_FIELDS.has(k) && typeof own[k] === 'string') own[k] = maskPans(own[k]);
  return { ...own, other } as T;
}

/** Whether masking would change one of the card and free-text fields of `fields` (most records: none). */
function someCardTextMasked(fields: Record<string, unknown>): boolean {
  // the few field names looked up, rather than every field of the record walked (as the copy above takes them:
  // own and enumerable)
  for (const k of CARD_TEXT_FIELDS) {
    const v = fields[k];
    if (typeof v === 'string' && Object.prototype.propertyIsEnumerable.call(fields, k) && holdsCardNumber(v))
      return true;
  }
  return false;
}

/** Every card token in a record, at any depth (a `recurring` object may carry one): the strings under `cc_token`. */
function tokensIn(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > MAX_JSON_DEPTH || v === null || typeof v !== 'object') return out;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (CARD_TOKEN_FIELDS.has(k) && typeof x === 'string' && maskCardToken(x) !== x) out.push(x);
    else tokensIn(x, out, depth + 1);
  }
  return out;
}

/** `v` with every `cc_token` in it masked, at any depth (as tokensIn finds them); the same value when none is. */
function withTokensMasked(v: unknown, depth = 0): unknown {
  if (depth > MAX_JSON_DEPTH || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const items = v.map((x) => withTokensMasked(x, depth + 1));
    return items.some((x, i) => x !== v[i]) ? items : v;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const m = CARD_TOKEN_FIELDS.has(k) && typeof x === 'string' ? maskCardToken(x) : withTokensMasked(x, depth + 1);
    if (m !== x) changed = true;
    out[k] = m;
  }
  return changed ? out : v;
}

/**
 * An observation's recorded text and record, card numbers and tokens masked in both. A token the record holds
 * is masked wherever its text still shows it (a key written with escapes, `"cc\u005ftoken"`, or nested), and a
 * token nested in an object of the record (`recurring`) is masked there too.
 */
export function maskedObservation<T extends { other: Record<string, unknown> }>(
  raw: string,
  record: T,
): { raw: string; record: T } {
  const tokens = tokensIn(record);
  let text = maskCardNumbersInJson(raw);
  for (const t of tokens) if (text.includes(t)) text = text.split(t).join(maskCardToken(t));
  const flat = withCardNumbersMasked(record);
  if (tokens.length === 0) return { raw: text, record: flat };
  return { raw: text, record: withTokensMasked(flat) as T };
}
