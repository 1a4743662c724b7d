import { createHmac } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type { AlertChannel } from '../config/alerts';
import type { EventData } from '../events/catalog';
import type { AlertRaised } from '../events/alert-events';
import { senderDomain } from '../export/statements/delivery';

/**
 * The three channels an alert goes out by (docs/exceptions.md, "Alerts"): a signed JSON webhook, a
 * Slack-compatible incoming webhook, e-mail through the SMTP server statements use. Each throws on failure
 * with a message that holds no secret: never the URL (a Slack URL is its own token) nor the signing secret.
 */

export type RaisedAlert = EventData<typeof AlertRaised>;

export interface ChannelDeps {
  /** RECON_SMTP_URL and RECON_MAIL_FROM; undefined: an e-mail channel fails with a clear reason */
  readonly mail: { readonly smtpUrl: string; readonly from: string } | undefined;
  /** per request; 10 s when not given */
  readonly timeoutMs?: number;
  /** a transport of the caller's (tests, a pool); made from `mail` when absent */
  readonly transport?: Transporter;
}

/** The webhook's body: the alert as JSON (the same bytes are signed). */
export function webhookBody(a: RaisedAlert): string {
  return JSON.stringify({
    alertId: a.alertId,
    rule: a.rule,
    kind: a.kind,
    subject: a.subject,
    title: a.title,
    text: a.text,
    facts: a.facts,
    raisedAt: a.raisedAt,
  });
}

/** `v1=` and the hex HMAC-SHA256, keyed by the secret, of the timestamp, a full stop and the body. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The error of a request, without the URL (fetch's cause names the host and port, never the path). */
function httpError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return 'timed out';
  const cause = err.cause?.code ?? err.cause?.message;
  // defence in depth: the config refuses credentials in a URL, which fetch's own message would quote
  return `${err.message ?? String(e)}${cause ? ` (${cause})` : ''}`.replace(/\/\/[^@\s/]*@/g, '//***@').slice(0, 500);
}

async function post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (e) {
    throw new Error(httpError(e));
  }
  // the body is read (so the connection is freed) but not kept: a receiver's page could echo anything
  await res.arrayBuffer().catch(() => undefined);
  if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
  return `HTTP ${res.status}`;
}

/** The SMTP URL with nodemailer's three waits (query parameters it reads), unless the URL sets them itself. */
function withTimeouts(smtpUrl: string, timeoutMs: number): string {
  const u = new URL(smtpUrl);
  for (const k of ['connectionTimeout', 'greetingTimeout', 'socketTimeout'])
    if (!u.searchParams.has(k)) u.searchParams.set(k, String(timeoutMs));
  return u.toString();
}

async function sendEmail(a: RaisedAlert, to: readonly string[], deps: ChannelDeps): Promise<string> {
  if (!deps.mail && !deps.transport) throw new Error('RECON_SMTP_URL and RECON_MAIL_FROM are not set');
  // nodemailer's own waits run to 30 s for a greeting and 10 min for a silent socket: one hung server would
  // hold the whole evaluation, and a second worker would take the attempt for one cut short and send again
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const transport = deps.transport ?? nodemailer.createTransport(withTimeouts(deps.mail!.smtpUrl, timeoutMs));
  try {
    const info = await transport.sendMail({
      from: deps.mail?.from,
      to: [...to],
      subject: `[recon] ${a.title}`,
      text: `${a.text}\n\nrule ${a.rule}, alert ${a.alertId}, raised ${a.raisedAt}\n`,
      // the same alert keeps its Message-ID across attempts: a mail system drops a repeat; the right side is
      // the sender's domain (RFC 5322), as a statement's, never the tool's name
      messageId: `<alert-${a.alertId}@${senderDomain(deps.mail?.from ?? '')}>`,
    });
    return String(info.response ?? 'accepted').slice(0, 500);
  } catch (e) {
    const err = e as { response?: string; code?: string; message?: string };
    throw new Error(
      `${err.code ? `${err.code}: ` : ''}${err.response ?? err.message ?? String(e)}`.replace(
        /\/\/[^@\s/]*@/g,
        '//***@',
      ),
    );
  } finally {
    if (!deps.transport) transport.close();
  }
}

/**
 * Slack reads `<…>` as a mention (`<!channel>`) or a link (`<http://…|text>`) and `&` as an entity: the three
 * escaped as Slack documents, the PSP's text in an alert is shown as it is, never acted on.
 */
export function slackEscaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Sends one alert by one channel at `now`; the answer (status) when accepted, else throws. */
export async function sendAlert(a: RaisedAlert, channel: AlertChannel, deps: ChannelDeps, now: Date): Promise<string> {
  const timeoutMs = deps.timeoutMs ?? 10_000;
  switch (channel.type) {
    case 'webhook': {
      const body = webhookBody(a);
      const timestamp = String(Math.floor(now.getTime() / 1000));
      return post(
        channel.url,
        body,
        {
          'x-recon-alert-id': a.alertId,
          'x-recon-timestamp': timestamp,
          'x-recon-signature': signature(channel.secret, timestamp, body),
        },
        timeoutMs,
      );
    }
    case 'slack':
      return post(
        channel.url,
        JSON.stringify({ text: `*${slackEscaped(a.title)}*\n${slackEscaped(a.text)}` }),
        {},
        timeoutMs,
      );
    case 'email':
      return sendEmail(a, channel.to, deps);
  }
}
