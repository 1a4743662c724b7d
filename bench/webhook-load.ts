import { randomUUID } from 'node:crypto';

/**
 * The webhook load shared by the ingestion benchmark and the soak: autocannon posts distinct signed
 * webhooks, each of a new payment. They are signed before the load starts (the load generator stands in
 * for the PSP, whose signing does not run on recon's machine, so it should take as little of the two
 * cores as it can); should they run out, the rest are signed on the fly.
 */

/** A webhook ready to post: the payment it is about and its signed form body. */
export interface SignedWebhook {
  readonly paymentId: string;
  readonly body: string;
}

/** The signed form body of webhook number `n`, about payment `paymentId`. */
export type WebhookForm = (paymentId: string, n: number) => string;

function signed(form: WebhookForm, n: number): SignedWebhook {
  const paymentId = randomUUID();
  return { paymentId, body: form(paymentId, n) };
}

/** `count` webhooks, numbered from `first`. */
export function signedAhead(form: WebhookForm, count: number, first: number): SignedWebhook[] {
  return Array.from({ length: count }, (_, i) => signed(form, first + i));
}

/**
 * autocannon's `requests` for the load: request n posts ahead[n], or past them a webhook signed on the
 * fly (numbered onTheFlyFirst + n); the payment ids answered 200 are pushed to `ok`.
 */
export function webhookRequests(
  form: WebhookForm,
  ahead: readonly SignedWebhook[],
  onTheFlyFirst: number,
  ok: string[],
): Record<string, unknown>[] {
  let n = 0;
  return [
    {
      setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => {
        const next = ahead[n] ?? signed(form, onTheFlyFirst + n);
        n++;
        context.paymentId = next.paymentId;
        return { ...req, body: next.body };
      },
      onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
        if (status === 200) ok.push(context.paymentId as string);
      },
    },
  ];
}
