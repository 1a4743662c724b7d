import { describe, expect, it } from 'vitest';
import { pspEnv } from '../../fixtures/psp-env';
import { loadConfig } from '../../src/config/env';
import { loggerFor } from '../../src/cli/runtime';

/**
 * src/log.ts promises that no configured secret reaches a log "whatever a caller passes in": every line is
 * scrubbed of the secret values. The scrubber looked for them in the line as written, JSON, where a `"` or a `\`
 * of a secret is escaped (`\"`, `\\`): a PSP API secret, a token or an SMTP password holding either (as generated
 * passwords do) went through whole, readable again by anyone parsing the log line.
 */

const apiSecret = 'Psp"Secret\\With-Quote_01';
const smtpPassword = 'Mail"Pass\\42';
const token = 'Auditor\\Token"0123456789';

function logged(text: string): string {
  const c = loadConfig({
    ...pspEnv({
      baseUrl: 'http://127.0.0.1:9/',
      reportUrl: 'http://127.0.0.1:9/',
      posId: '11111111-2222-3333-4444-555555555555',
      apiKey: 'key_abcdefghijkl',
      apiSecret,
      endpointsKey: 'endpoints_abcdefghijkl',
    }),
    RECON_SMTP_URL: `smtp://mailer:${encodeURIComponent(smtpPassword)}@127.0.0.1:2525`,
    RECON_MAIL_FROM: 'recon@example.com',
    RECON_AUDITOR_TOKEN: token,
  });
  if (!c.ok) throw new Error(JSON.stringify(c.issues));
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((line: string) => {
    lines.push(line);
    return true;
  }) as typeof process.stderr.write;
  try {
    loggerFor(c.config).error('a client failed', { error: new Error(text), detail: text });
  } finally {
    process.stderr.write = write;
  }
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('the log scrubber and secrets holding a quote or a backslash', () => {
  it.each([
    ['PSP_API_SECRET', apiSecret],
    ['the password of RECON_SMTP_URL', smtpPassword],
    ['RECON_AUDITOR_TOKEN', token],
  ])('%s does not reach the log line', (_what, secret) => {
    // what a reader of the log gets back: the line parsed
    const parsed = JSON.parse(logged(`535 5.7.8 authentication failed (${secret})`)) as {
      detail: string;
      error: { message: string };
    };
    expect(parsed.detail).toContain('authentication failed');
    expect(parsed.detail).not.toContain(secret);
    expect(parsed.error.message).not.toContain(secret);
  });
});
