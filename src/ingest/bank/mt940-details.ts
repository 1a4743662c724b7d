/**
 * The `:86:` information of an MT940 entry. German banks structure it (Deutsche Kreditwirtschaft, "DK"
 * format): a three-digit business transaction code (GVC) then `?NN` subfields; SEPA payments add keywords
 * (EREF+, SVWZ+ …) inside the remittance subfields. Other banks write free text, sometimes with `/KEY/value`
 * codes (ING, Rabobank). Subfields are cut at 27 characters wherever the text falls, so a part of exactly
 * 27 characters is joined to the next without a space, any shorter part with one.
 */

export interface EntryInformation {
  readonly gvc: string | null;
  readonly bookingText: string | null;
  readonly remittance: string | null;
  readonly endToEndId: string | null;
  readonly counterpartyName: string | null;
  readonly counterpartyAccount: string | null;
  readonly returnCode: string | null;
}

const SEPA_KEYS = ['EREF', 'KREF', 'MREF', 'CRED', 'DEBT', 'COAM', 'OAMT', 'SVWZ', 'ABWA', 'ABWE'];
const SEPA_KEY = new RegExp(`(${SEPA_KEYS.join('|')})\\+`, 'g');

function joinParts(parts: readonly string[]): string | null {
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (i > 0 && parts[i - 1]!.length !== 27) out += ' ';
    out += p;
  }
  const t = out.trim();
  return t === '' ? null : t;
}

function sepaFields(text: string): Map<string, string> {
  const found: { key: string; at: number; end: number }[] = [];
  for (const m of text.matchAll(SEPA_KEY)) found.push({ key: m[1]!, at: m.index, end: m.index + m[0].length });
  const out = new Map<string, string>();
  found.forEach((f, i) => {
    const value = text.slice(f.end, i + 1 < found.length ? found[i + 1]!.at : text.length).trim();
    if (!out.has(f.key) && value !== '') out.set(f.key, value);
  });
  return out;
}

const notProvided = (v: string | undefined): string | null => (v === undefined || v === 'NOTPROVIDED' ? null : v);

/** How many `?NN` subfields the field holds (the reader bounds it before reading them). */
export function subfieldCount(lines: readonly string[]): number {
  let n = 0;
  for (const l of lines) for (let i = l.indexOf('?'); i >= 0; i = l.indexOf('?', i + 1)) n++;
  return n;
}

/** `lines` are the field's lines as the file gives them (without the `:86:` tag). */
export function entryInformation(lines: readonly string[]): EntryInformation {
  const joined = lines.join('');
  const structured = /^(\d{3})\?/.exec(joined);
  if (!structured) return unstructured(lines.join(' ').trim());
  const sub = new Map<string, string[]>();
  for (const m of joined.slice(3).matchAll(/\?(\d{2})([^?]*)/g)) {
    const list = sub.get(m[1]!) ?? [];
    list.push(m[2]!);
    sub.set(m[1]!, list);
  }
  const one = (k: string) => (sub.get(k) ?? []).join('').trim() || null;
  const remittanceParts: string[] = [];
  for (const k of ['20', '21', '22', '23', '24', '25', '26', '27', '28', '29', '60', '61', '62', '63'])
    for (const part of sub.get(k) ?? []) remittanceParts.push(part);
  const text = joinParts(remittanceParts);
  const sepa = text ? sepaFields(text) : new Map<string, string>();
  const remittance = sepa.size > 0 ? (sepa.get('SVWZ') ?? text) : text;
  return {
    gvc: structured[1]!,
    bookingText: one('00'),
    remittance,
    endToEndId: notProvided(sepa.get('EREF')),
    counterpartyName: joinParts([...(sub.get('32') ?? []), ...(sub.get('33') ?? [])]),
    counterpartyAccount: (one('38') ?? one('31'))?.replace(/\s+/g, '').toUpperCase() ?? null,
    returnCode: one('34'),
  };
}

/** Free text, with the `/KEY/value/` codes some banks use read when present. */
function unstructured(text: string): EntryInformation {
  const code = (key: string) => {
    const m = new RegExp(`/${key}/([^/]*)`).exec(text);
    return m ? m[1]!.trim() || null : null;
  };
  const coded = /^\/[A-Z]{2,4}\//.test(text);
  return {
    gvc: null,
    bookingText: null,
    remittance: coded ? (code('REMI') ?? text) : text || null,
    endToEndId: coded ? notProvided(code('EREF') ?? undefined) : null,
    counterpartyName: coded ? code('NAME') : null,
    counterpartyAccount: coded ? (code('IBAN')?.toUpperCase() ?? null) : null,
    returnCode: coded ? code('RTRN') : null,
  };
}

/**
 * SWIFT's codes of a statement line's original amount and of the charges taken with it (field 61's supplementary
 * details, or a coded field 86): `/OCMT/EUR100,00/`, `/CHGS/EUR1,50/`, values as written (the reader checks them).
 * A value may run to the next code's slash or to the end of the text.
 */
export function swiftAmountCodes(text: string): { original: string | null; charges: string[] } {
  let original: string | null = null;
  const charges: string[] = [];
  for (const m of text.matchAll(/\/(OCMT|CHGS)\/([^/]*)(?=\/|$)/g)) {
    if (m[1] === 'CHGS') charges.push(m[2]!.trim());
    else original ??= m[2]!.trim();
  }
  return { original, charges };
}
