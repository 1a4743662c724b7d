import { ReconError } from '../errors';

/**
 * Refusals of payout runs. `usage`: the command as typed (another run, another person, a run in another state);
 * `configuration`: what the payment file needs is not configured (named by its variable or option).
 */
export class PayoutRunRefused extends ReconError {
  readonly kind = 'usage';
  constructor(
    readonly code:
      | 'NO_SUCH_RUN'
      | 'RUN_NOT_DRAFT'
      | 'RUN_NOT_APPROVED'
      | 'RUN_ALREADY_SENT'
      | 'MAKER_CHECKER'
      | 'NOTHING_TO_PAY'
      | 'CHANGED_MEANWHILE'
      | 'EXECUTION_DATE_PASSED'
      | 'STATED_LOWER'
      | 'PAID_SINCE'
      | 'HOLD_IN_FORCE'
      | 'PAYEE_CHANGED'
      | 'FILE_TAKEN'
      | 'RUN_NOT_SENT'
      | 'NOTHING_UNPAID'
      | 'NOT_PAST_DUE'
      | 'INVALID_INPUT',
    message: string,
  ) {
    super(message);
    this.name = 'PayoutRunRefused';
  }
}

export class PayoutConfigMissing extends ReconError {
  readonly kind = 'configuration';
  readonly code = 'PAYOUT_CONFIG_MISSING';
  constructor(message: string) {
    super(message);
    this.name = 'PayoutConfigMissing';
  }
}
