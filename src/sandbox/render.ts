import type { Operation, ReceiverPart, SandboxStatus } from './model';
import type { RegisterField } from '../psp/schemas';

/**
 * The PSP's wire forms of an operation: register rows (2.10), period records (2.9), webhook bodies
 * (section 6) and payment records (2.5). JSON is written by hand so that amounts come out as the
 * PSP writes them (numbers with at most two decimals; two-decimal strings in period records) and
 * never pass through a float.
 */

/** Fields of a register record (2.10) plus projectId, in the order the sandbox writes them. */
// The register's fields are the interface's (src/psp/schemas.ts): one list for recon and its sandbox.
export {
  REGISTER_FIELDS,
  REGISTER_DEFAULT_FIELDS as DEFAULT_REGISTER_FIELDS,
  type RegisterField,
} from '../psp/schemas';

/** Minor units as a JSON number with at most two decimals, as the PSP writes them (12.5, 7, 0.05). */
export function wireNumber(minor: bigint): string {
  const neg = minor < 0n;
  const abs = neg ? -minor : minor;
  const whole = (abs / 100n).toString();
  const frac = (abs % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Minor units as a two-decimal string ("12.50"), the form of period records. */
export function twoDecimals(minor: bigint): string {
  const neg = minor < 0n;
  const abs = neg ? -minor : minor;
  return `${neg ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Record timestamp without zone: yyyy-MM-ddTHH:mm:ss.SSS in UTC. */
export function recordTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

const str = (v: string | null | undefined): string => (v === null || v === undefined ? 'null' : JSON.stringify(v));

function objectText(entries: ReadonlyArray<readonly [string, string]>): string {
  let out = '{';
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i]!;
    out += `${i ? ',' : ''}"${k}":${v}`;
  }
  return `${out}}`;
}

export interface RegisterRenderOptions {
  readonly fields: readonly RegisterField[];
  readonly projectName: string;
  readonly entityName: string;
  /** the "page changes between two fetches" fault: pending operations show as success */
  readonly lateStatusChange?: boolean;
}

/** An operation's field in a register row (undefined: a receiver's field, or none the sandbox knows). */
function operationField(
  op: Operation,
  status: SandboxStatus,
  opts: RegisterRenderOptions,
  name: RegisterField,
  altered: boolean,
): string | undefined {
  switch (name) {
    case 'projectId':
      return str(op.posId);
    case 'orderId':
      return str(op.orderId);
    case 'paymentId':
      return str(op.paymentId);
    case 'amount':
      return wireNumber(op.originalAmount + op.customerFee);
    case 'currency':
      return str(op.currency);
    case 'method':
      return str(op.method);
    case 'status':
      return str(status);
    case 'dateTime':
      return String(op.at);
    case 'cardMask':
      return str(altered ? `${op.card.mask.slice(0, 12)}0000` : op.card.mask);
    case 'payway':
      return str(altered ? (op.card.payway === 'card' ? 'google_pay' : 'card') : op.card.payway);
    case 'customerFee':
      return wireNumber(op.customerFee);
    case 'merchantFee':
      return wireNumber(op.merchantFee);
    case 'entityName':
      return str(opts.entityName);
    case 'projectName':
      return str(opts.projectName);
    case 'originalAmount':
      return wireNumber(op.originalAmount);
    case 'exchangeAmount':
    case 'exchangeCurrency':
    case 'exchangeRate':
    case 'recipientCardMask':
      return 'null';
    case 'tokenizationKind':
      return str(op.card.tokenizationKind);
    case 'authCode':
      return str(op.authCode);
    case 'rrnCode':
      return str(altered ? `${op.rrnCode ?? ''}9` : op.rrnCode);
    case 'description':
      return str(op.description);
    case 'payload':
      return str(op.payload);
    case 'paymentSystem':
      return str(op.card.paymentSystem);
    default:
      return undefined;
  }
}

/** Register rows of one operation: one per receiver (operation fields repeated), or one for an own operation. */
export function registerRows(op: Operation, opts: RegisterRenderOptions): string[] {
  const d = op.distortion;
  if (d?.kind === 'omit' && d.source === 'register') return [];
  const status: SandboxStatus = opts.lateStatusChange && op.status === 'pending' ? 'success' : op.status;
  const common = (name: RegisterField, altered: boolean) => operationField(op, status, opts, name, altered);
  const row = (part: ReceiverPart | null, index: number, altered: boolean): string => {
    const entries: Array<readonly [string, string]> = [];
    for (const name of opts.fields) {
      let v = common(name, altered);
      if (v === undefined) {
        if (!part) v = 'null';
        else if (name === 'receiverName') v = str(part.name);
        else if (name === 'receiverFee') v = wireNumber(part.fee);
        else if (name === 'reserveAmount') v = wireNumber(part.reserve);
        else if (name === 'receiverAmount')
          v = wireNumber(d?.kind === 'receiver_amount' && d.receiverIndex === index ? d.value : part.amount);
        else v = 'null';
      }
      entries.push([name, v]);
    }
    return objectText(entries);
  };
  if (op.receivers.length === 0) return [row(null, 0, false)];
  const rows: string[] = [];
  op.receivers.forEach((part, j) => {
    rows.push(row(part, j, false));
    if (d?.kind === 'duplicate_row' && d.receiverIndex === j) rows.push(row(part, j, true));
  });
  return rows;
}

/** Number of register rows of an operation (no rendering). */
export function registerRowCount(op: Operation): number {
  const d = op.distortion;
  if (d?.kind === 'omit' && d.source === 'register') return 0;
  return Math.max(1, op.receivers.length) + (d?.kind === 'duplicate_row' ? 1 : 0);
}

/** The period record (2.9) of an operation, or null when it is missing from the period source. */
export function periodRecord(op: Operation): string | null {
  const d = op.distortion;
  if (d?.kind === 'omit' && d.source === 'period') return null;
  const over = d && 'source' in d && d.source === 'period' ? d : null;
  const status = over?.kind === 'status' ? over.value : op.status;
  const amount = over?.kind === 'amount' ? over.value : op.originalAmount;
  const currency = over?.kind === 'currency' ? over.value : op.currency;
  const merchantFee = over?.kind === 'fee' ? over.value : op.merchantFee;
  return objectText([
    ['projectId', str(op.posId)],
    ['orderId', str(op.orderId)],
    ['paymentId', str(op.paymentId)],
    ['amount', str(twoDecimals(amount))],
    ['currency', str(currency)],
    ['method', str(op.method)],
    ['status', str(status)],
    ['dateTime', op.blankPeriodDateTime ? '""' : String(op.at)],
    ['authCode', str(op.authCode ?? '')],
    ['rrnCode', str(op.rrnCode ?? '')],
    ['description', str(op.description)],
    ['payload', str(op.payload ?? '')],
    ['customerFee', str(twoDecimals(op.customerFee))],
    ['merchantFee', str(twoDecimals(merchantFee))],
    ['paymentSystem', str(op.card.paymentSystem)],
    ['recipientCardMask', str('')],
  ]);
}

const feeObject = (minor: bigint, currency: string) =>
  objectText([
    ['amount', wireNumber(minor)],
    ['currency', str(currency)],
  ]);

/** The webhook body (decoded `data` JSON) of an operation, with any webhook-side distortion applied. */
export function webhookBody(op: Operation): string {
  const d = op.distortion;
  const over = d && 'source' in d && d.source === 'webhook' ? d : null;
  const status = over?.kind === 'status' ? over.value : op.status;
  const statusCode = over?.kind === 'status' ? over.statusCode : op.statusCode;
  const statusDescription = over?.kind === 'status' ? 'Declined by issuer' : op.statusDescription;
  const amount = over?.kind === 'amount' ? over.value : op.originalAmount;
  const currency = over?.kind === 'currency' ? over.value : op.currency;
  const fee = over?.kind === 'fee' ? over.value : op.merchantFee;
  const limitInfo =
    status === 'failure'
      ? objectText([
          ['retry_after', str(recordTime(op.processedAt + 3600_000))],
          ['description', str('Try again later')],
        ])
      : 'null';
  const e: Array<readonly [string, string]> = [];
  const primary = op.operationId === null;
  if (!primary) e.push(['operation_id', str(op.operationId)]);
  e.push(['payment_id', str(op.paymentId)], ['order_id', str(op.orderId)]);
  if (primary)
    e.push(['gateway_order_id', str(`gw-${op.transactionId}`)], ['billing_order_id', str(`bl-${op.transactionId}`)]);
  e.push(
    ['transaction_id', str(op.transactionId)],
    ['pos_id', str(op.posId)],
    ['mode', str(primary ? op.mode : 'direct')],
    ['method', str(op.method)],
  );
  e.push(['amount', wireNumber(amount)], ['currency', str(currency)]);
  if (primary) e.push(['payway', str(op.card.payway)], ['eci', str(op.status === 'success' ? '05' : null)]);
  e.push(['status', str(status)], ['status_code', str(statusCode)]);
  if (op.method !== 'void' && op.method !== 'refund' && op.method !== 'dispute') e.push(['limit_info', limitInfo]);
  e.push(['status_description', str(statusDescription)]);
  if (primary) {
    e.push(
      ['cc_mask', str(op.card.mask)],
      ['cc_token', str(op.card.token)],
      ['cc_token_expiration', str(op.card.tokenExpiration)],
    );
    e.push(['customer_id', str(op.customer.id)], ['customer_phone', str(op.customer.phone)]);
  }
  e.push(['fee', feeObject(fee, currency)]);
  if (primary)
    e.push(['fixed_fee', feeObject(op.fixedFee, currency)], ['percent_fee', feeObject(fee - op.fixedFee, currency)]);
  e.push(['created_at', str(recordTime(op.at))], ['processed_at', str(recordTime(op.processedAt))]);
  if (primary) e.push(['payload', str(op.payload)]);
  if (primary || op.method === 'refund')
    e.push(['receipt_url', str(`https://sandbox.psp.invalid/receipt/${op.transactionId}`)]);
  if (op.recurring)
    e.push([
      'recurring',
      objectText([
        ['id', str(op.recurring.id)],
        ['status', str(op.recurring.status)],
      ]),
    ]);
  return objectText(e);
}

/** A payment record (2.5) as the API's GET endpoints and the cancellation answer give it. */
export function paymentRecord(
  op: Operation,
  opts: { listing?: boolean; cancelled?: boolean } = {},
): Record<string, unknown> {
  const primary = op.operationId === null;
  const cancelled = opts.cancelled === true;
  const rec: Record<string, unknown> = {
    payment_id: op.paymentId,
    order_id: op.orderId,
    gateway_order_id: cancelled ? null : `gw-${op.transactionId}`,
    billing_order_id: cancelled ? null : `bl-${op.transactionId}`,
    transaction_id: op.transactionId,
  };
  if (!primary) rec.operation_id = op.operationId;
  Object.assign(rec, {
    pos_id: op.posId,
    mode: op.mode,
    method: op.method,
    amount: rawNumber(wireNumber(op.originalAmount)),
    currency: op.currency,
    description: op.description,
    payway: op.card.payway,
    status: op.status,
    status_code: op.statusCode,
    status_description: op.statusDescription,
    user_action_required: op.status === 'pending',
    user_action_url: cancelled ? null : op.userActionUrl,
    eci: cancelled ? null : op.status === 'success' ? '05' : null,
    mcc: cancelled ? null : '5399',
    options_3ds: 'supported',
    cc_mask: cancelled ? null : op.card.mask,
    cc_token: cancelled ? null : op.card.token,
    cc_token_expiration: cancelled ? null : op.card.tokenExpiration,
    customer_id: op.customer.id,
    customer_fname: op.customer.fname,
    customer_lname: op.customer.lname,
    customer_email: op.customer.email,
    customer_phone: op.customer.phone,
    created_at: recordTime(op.at),
    [opts.listing ? 'processing_time' : 'processed_at']: recordTime(op.processedAt),
    payload: op.payload,
    bank_short_name: 'SANDBOX',
    receipt_url: `https://sandbox.psp.invalid/receipt/${op.transactionId}`,
  });
  if (op.recurring) rec.recurring = { id: op.recurring.id, status: op.recurring.status };
  return rec;
}

/** A JSON number given by its exact text; `jsonText` writes it bare. */
export interface RawNumber {
  readonly rawNumber: string;
}
export const rawNumber = (text: string): RawNumber => ({ rawNumber: text });
const isRawNumber = (v: unknown): v is RawNumber =>
  typeof v === 'object' && v !== null && typeof (v as RawNumber).rawNumber === 'string' && Object.keys(v).length === 1;

/** JSON.stringify that writes RawNumber values as bare numbers. */
export function jsonText(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (isRawNumber(v)) {
      marks.push(v.rawNumber);
      return `\u0000RAW${marks.length - 1}\u0000`;
    }
    return v;
  });
  return text.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}
