/**
 * The console's one escaping function. Every page is built with the `html` tagged template: each interpolated
 * value is escaped as text unless it is already an `Html` fragment (built by `html` itself, or `raw` for a
 * constant the code owns). Arrays are joined, null/undefined/false render nothing. Nothing from the PSP, the
 * bank, a CSV or a request can reach a page unescaped, because there is no other way to write one.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text as HTML text or attribute value (always quoted by the templates). NUL and other C0 controls, which
 * HTML cannot carry, become U+FFFD; a lone surrogate is replaced by the encoder anyway.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '\ufffd');
}

type Value = Html | string | number | bigint | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false || v === true) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A fragment the code itself wrote (never data): the only way around escaping. */
export const raw = (text: string): Html => new Html(text);
