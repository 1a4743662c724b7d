import type { IncomingMessage } from 'node:http';

/**
 * A request body as text, read whole up to `limit` bytes. Bytes that are not UTF-8 are refused rather than
 * turned into U+FFFD: a decision's note or an order's id stored with a replacement character is no longer what
 * was sent, and nothing would say so.
 */
export type BodyText = { ok: true; text: string } | { ok: false; problem: 'too_large' | 'not_utf8' };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function bodyText(req: IncomingMessage, limit: number): Promise<BodyText> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > limit) return { ok: false, problem: 'too_large' };
    chunks.push(c);
  }
  const text = utf8Text(Buffer.concat(chunks));
  return text === null ? { ok: false, problem: 'not_utf8' } : { ok: true, text };
}

/** `bytes` as UTF-8 text, or null when they are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * A form body (application/x-www-form-urlencoded) as URLSearchParams, each name and value's percent-escapes
 * decoded as UTF-8 strictly (URLSearchParams puts U+FFFD for `%FF` without a word); null when one is not UTF-8.
 */
export function strictForm(text: string): URLSearchParams | null {
  const out = new URLSearchParams();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = formPart(eq < 0 ? pair : pair.slice(0, eq));
    const value = formPart(eq < 0 ? '' : pair.slice(eq + 1));
    if (name === null || value === null) return null;
    out.append(name, value);
  }
  return out;
}

/** One name or value: `+` is a space, `%XY` a byte (a `%` not followed by two hex digits stays as written). */
function formPart(part: string): string | null {
  const plain = part.replace(/\+/g, ' ');
  if (!plain.includes('%')) return plain;
  const bytes: number[] = [];
  for (let i = 0; i < plain.length; i++) {
    const hex = plain.slice(i + 1, i + 3);
    if (plain[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      // a character sent as itself, whole (a pair of surrogates is one character)
      const ch = String.fromCodePoint(plain.codePointAt(i)!);
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      i += ch.length - 1;
    }
  }
  return utf8Text(Uint8Array.from(bytes));
}
