import addressparser from 'nodemailer/lib/addressparser/index.js';

// a local part and a domain of dot-separated labels (letters of any script, digits, hyphens)
const MAILBOX = /^[^\s@<>()[\]\\,;:"]+@[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)*$/u;

/**
 * Why RECON_MAIL_FROM cannot be the sender of the statement and alert e-mails, or null when it can: one mailbox,
 * read as nodemailer reads it. Anything with an "@" was taken: "payouts@" was sent as the envelope sender every
 * server refuses, and "a@x.com, b@y.com" as a From of two mailboxes without the Sender RFC 5322 then requires.
 */
export function mailFromProblem(from: string): string | null {
  const expected = 'expected one sender address, e.g. Marketplace Payouts <payouts@example.com> or payouts@example.com';
  if (/[\u0000-\u001f\u007f]/.test(from)) return `${expected}, on one line without control characters`;
  const parsed = addressparser(from);
  const one = parsed.length === 1 ? parsed[0]! : undefined;
  if (one === undefined || !('address' in one) || !MAILBOX.test(one.address))
    return `${expected}, got ${JSON.stringify(from.slice(0, 100))}`;
  return null;
}
