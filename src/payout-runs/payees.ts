import { newEvent } from '../events/catalog';
import { PayeeAccountConfirmed, subMerchantStream } from '../events/ledger-events';
import { checkText, NOTE_TEXT } from '../input-rules';
import type { Person } from '../people/directory';
import { StoreError } from '../store/errors';
import type { EventStore } from '../store/types';
import { allowed } from './actions';
import { PayoutRunRefused } from './errors';
import { payeeFrom } from './inputs';

/**
 * A payee's new payout account confirmed by a named approver (docs/exceptions.md, "Payout runs"): the person
 * types the account (and BIC) as they checked it with the sub-merchant, and it must be exactly the one the
 * directory gives, so a confirmation never trusts what nobody read. Confirming what is already trusted writes
 * nothing.
 */

const ACCOUNT = /^[A-Z0-9]{5,34}$/;
const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;
const normalized = (s: string) => s.replace(/\s+/g, '').toUpperCase();
/** the last four characters: enough to tell two accounts apart in a refusal, not enough to copy one */
const ending = (account: string) => `…${account.slice(-4)}`;

export interface PayeeConfirmation {
  readonly subMerchantId: string;
  readonly account: string;
  /** the BIC the directory gives with it; absent: none */
  readonly bic?: string;
  readonly note: string;
  readonly now?: Date;
}

function checked(c: PayeeConfirmation) {
  const account = normalized(c.account);
  if (!ACCOUNT.test(account))
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      '--account: expected an IBAN or account number (5 to 34 letters and digits)',
    );
  const bic = c.bic === undefined ? null : normalized(c.bic);
  if (bic !== null && !BIC.test(bic))
    throw new PayoutRunRefused('INVALID_INPUT', '--bic: expected a BIC of 8 or 11 characters (e.g. COBADEFFXXX)');
  const note = checkText(c.note.trim(), { ...NOTE_TEXT, maxLength: 2000 });
  if (!note.ok)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--note: ${note.reason === 'empty' ? 'say how the account was checked with the sub-merchant' : note.reason}`,
    );
  return { account, bic, note: note.value };
}

/** Confirms the payout account the directory gives a sub-merchant; returns whether anything was recorded. */
export async function confirmPayeeAccount(store: EventStore, actor: Person, c: PayeeConfirmation): Promise<boolean> {
  allowed(actor, 'payee.confirm');
  const { account, bic, note } = checked(c);
  const stream = await store.readStream(subMerchantStream(c.subMerchantId));
  // the payee judged and the revision appended at come from one read: nothing changes between them unseen
  const payee = payeeFrom(stream);
  if (!payee) throw new PayoutRunRefused('INVALID_INPUT', `sub-merchant: ${c.subMerchantId} is not in the directory`);
  if (!payee.payoutAccount)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `sub-merchant: the directory gives ${c.subMerchantId} no payout account`,
    );
  if (payee.payoutAccount !== account || (payee.payoutBic ?? null) !== bic)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--account: the directory gives ${c.subMerchantId} the account ${ending(payee.payoutAccount)}` +
        `${payee.payoutBic ? ` at ${payee.payoutBic}` : ' with no BIC'}, not ${ending(account)}${bic ? ` at ${bic}` : ''}; ` +
        'confirm only the account you checked with the sub-merchant, as the directory gives it',
    );
  if (payee.accountConfirmed !== false) return false;
  const last = stream.at(-1)!;
  const event = newEvent(
    PayeeAccountConfirmed,
    {
      subMerchantId: c.subMerchantId,
      payoutAccount: account,
      payoutBic: bic,
      confirmedBy: actor.id,
      confirmedAt: (c.now ?? new Date()).toISOString(),
      note,
    },
    { idContent: { subMerchantId: c.subMerchantId, account, bic, after: last.id } },
  );
  try {
    await store.append(subMerchantStream(c.subMerchantId), [event], { expectedRevision: last.revision });
  } catch (e) {
    // the directory changed (or another person confirmed) meanwhile: what was checked is no longer what it says
    if (e instanceof StoreError && (e.code === 'WRONG_EXPECTED_REVISION' || e.code === 'EVENT_ID_CONFLICT'))
      throw new PayoutRunRefused(
        'CHANGED_MEANWHILE',
        `${c.subMerchantId}'s directory entry changed meanwhile; check it again`,
      );
    throw e;
  }
  return true;
}
