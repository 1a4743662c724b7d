import { ReconError } from '../errors';

/**
 * An exception action refused, naming the field (the CLI's option, the API's JSON field) to change. All are
 * `usage`: the action as asked cannot be done; nothing was written.
 *   INVALID     a value is wrong (400)
 *   NOT_FOUND   no discrepancy with that id (404)
 *   CONFLICT    the exception's state does not allow it, or another person acted first (409)
 *   FORBIDDEN   maker-checker: the proposer approving their own proposal (403)
 */
export class ExceptionRefused extends ReconError {
  readonly kind = 'usage';
  constructor(
    readonly code: 'INVALID' | 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN',
    readonly field: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'ExceptionRefused';
  }
}
