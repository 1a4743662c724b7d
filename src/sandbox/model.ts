/**
 * The sandbox's picture of the PSP's data: orders, their operations, and the injected differences
 * between the PSP's three sources (register report, period transactions, webhooks). Amounts are
 * integer minor units (bigint); times are milliseconds since the epoch.
 */

import { type InjectedBy, typesInjectedBy } from '../reconciliation/discrepancies/registry';

export type SandboxMethod = 'auth' | 'purchase' | 'capture' | 'void' | 'refund' | 'dispute' | 'recurrent';
export type SandboxStatus = 'init' | 'pending' | 'success' | 'failure';
export type SourceName = 'register' | 'period' | 'webhook';

/** Kinds of order the generator makes (weights in ScenarioOptions.mix). */
export type OrderKind =
  | 'split_purchase'
  | 'split_auth_capture'
  | 'split_auth_void'
  | 'hosted_purchase'
  | 'hosted_abandoned'
  | 'declined'
  | 'pending_3ds'
  | 'subscription'
  | 'own_purchase';

export interface SubMerchant {
  readonly id: string;
  readonly name: string;
  /** false for the sub-merchants left out of the directory on purpose (unknown_sub_merchant) */
  readonly listed: boolean;
  /** rolling reserve, basis points of the share (0: none) */
  readonly reserveBp: number;
  /** null: empty in the CSV (recon's default of 90 applies) */
  readonly holdDays: number | null;
  readonly fixedFee: bigint;
  readonly percentBp: number;
  /** fixed fee on each refund row */
  readonly refundFee: bigint;
}

/** One receiver's part of a split operation: share = amount + fee. */
export interface ReceiverPart {
  readonly subMerchantId: string;
  readonly name: string;
  readonly share: bigint;
  readonly fee: bigint;
  readonly fixedFee: bigint;
  readonly percentFee: bigint;
  /** receiverAmount: what the sub-merchant is paid */
  readonly amount: bigint;
  readonly reserve: bigint;
}

/** A difference injected into one source for one operation (at most one per order). */
export type Distortion =
  | { readonly kind: 'omit'; readonly source: 'register' | 'period' }
  | {
      readonly kind: 'status';
      readonly source: 'period' | 'webhook';
      readonly value: SandboxStatus;
      readonly statusCode: string;
    }
  | { readonly kind: 'amount'; readonly source: 'period' | 'webhook'; readonly value: bigint }
  | { readonly kind: 'currency'; readonly source: 'period' | 'webhook'; readonly value: string }
  /** period `merchantFee` or webhook `fee.amount` */
  | { readonly kind: 'fee'; readonly source: 'period' | 'webhook'; readonly value: bigint }
  /** register `receiverAmount` of one receiver, so that the shares no longer sum to originalAmount */
  | { readonly kind: 'receiver_amount'; readonly receiverIndex: number; readonly value: bigint }
  /** the receiver's register row appears twice in every report, the copy differing in cardMask, payway, rrnCode */
  | { readonly kind: 'duplicate_row'; readonly receiverIndex: number };

/** sent: delivered by deliverWebhooks; lost_resendable: skipped there but re-sent on request; lost_for_good: never sent */
export type WebhookFate = 'sent' | 'none' | 'lost_resendable' | 'lost_for_good';

export interface CardData {
  readonly mask: string;
  readonly token: string;
  readonly tokenExpiration: string;
  readonly payway: string;
  readonly paymentSystem: string;
  readonly tokenizationKind: string | null;
}

export interface Operation {
  readonly posId: string;
  readonly orderId: string;
  readonly paymentId: string;
  readonly transactionId: string;
  /** set on secondary operations (capture, void, refund, dispute) */
  readonly operationId: string | null;
  readonly mode: 'direct' | 'hosted';
  readonly method: SandboxMethod;
  readonly status: SandboxStatus;
  readonly statusCode: string;
  readonly statusDescription: string;
  readonly currency: string;
  /** amount requested (webhook amount, period amount, register originalAmount) */
  readonly originalAmount: bigint;
  readonly customerFee: bigint;
  /** Σ receivers' fee for split operations; the marketplace's own fee otherwise */
  readonly merchantFee: bigint;
  readonly fixedFee: bigint;
  readonly percentFee: bigint;
  /** empty: a marketplace-own operation (register row without receiver fields) */
  readonly receivers: readonly ReceiverPart[];
  /** creation time (register/period dateTime, webhook created_at) */
  readonly at: number;
  readonly processedAt: number;
  /** the period record shows dateTime "" (init/pending only) */
  readonly blankPeriodDateTime: boolean;
  readonly card: CardData;
  readonly authCode: string | null;
  readonly rrnCode: string | null;
  readonly description: string;
  readonly payload: string | null;
  readonly customer: {
    readonly id: string;
    readonly email: string;
    readonly phone: string;
    readonly fname: string;
    readonly lname: string;
  };
  readonly recurring: { readonly id: string; readonly status: 'init' | 'active' | 'canceled' } | null;
  readonly userActionUrl: string | null;
  readonly distortion: Distortion | null;
  readonly webhook: WebhookFate;
}

export interface Order {
  readonly index: number;
  readonly posId: string;
  readonly orderId: string;
  readonly kind: OrderKind;
  readonly mode: 'direct' | 'hosted';
  readonly recurringId: string | null;
  /** webhook target given in the purchase request (orders created over HTTP only) */
  readonly serverUrl: string | null;
  readonly notificationUrl: string | null;
  /** in time order */
  readonly operations: readonly Operation[];
  readonly injection: InjectionType | null;
}

/**
 * Ground-truth discrepancy types: the disagreements of PSP data the sandbox injects, the registry's types its
 * scenario injects (src/reconciliation/discrepancies/registry.ts, `sandbox.by: 'scenario'`), in its order.
 * The registry is a leaf: the sandbox stands beside recon and does not import its read side.
 */
export const GROUND_TRUTH_TYPES = typesInjectedBy('scenario');
export type GroundTruthType = InjectedBy<'scenario'>;

/** What can be injected: the ground-truth types plus a webhook lost on delivery that a re-send recovers. */
export type InjectionType = GroundTruthType | 'webhook_lost_resendable';

export interface GroundTruthEntry {
  readonly type: GroundTruthType;
  readonly posId: string;
  /** null for report_count_mismatch (a property of a report, not of a payment) */
  readonly orderId: string | null;
  readonly paymentId: string | null;
  /** the operation's transaction_id (selects one transaction of a subscription in a re-send request) */
  readonly transactionId: string | null;
  readonly method: SandboxMethod | null;
  readonly receiverName?: string;
  /** JSON-safe: amounts as decimal strings of minor units */
  readonly detail: Readonly<Record<string, string | number | boolean | null>>;
}

export interface PosCredentials {
  readonly posId: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly endpointsKey: string;
}

/** The PSP's status codes and texts the sandbox answers with. */
export const STATUS_TEXT = {
  success: { code: '1000', text: 'Transaction is successful' },
  pending3ds: { code: '2122', text: '3-D Secure verification required to finish' },
  cancelled: { code: '6007', text: 'Payment cancelled' },
  // Not published by the PSP: invented for the sandbox (docs/sandbox.md).
  declined: { code: '2005', text: 'Declined by issuer' },
  init: { code: '2120', text: 'Waiting for the customer' },
} as const;
