import { ReconError } from '../errors';

/**
 * The people layer's refusals. All are `usage`: what makes them go away is the command as typed — another
 * token (RECON_TOKEN), another user, another role.
 */
export class NotAllowed extends ReconError {
  readonly kind = 'usage';
  constructor(
    readonly code: 'UNAUTHENTICATED' | 'FORBIDDEN',
    message: string,
  ) {
    super(message);
    this.name = 'NotAllowed';
  }
}

export class UserRefused extends ReconError {
  readonly kind = 'usage';
  constructor(
    readonly code: 'USER_EXISTS' | 'NO_SUCH_USER' | 'USER_REVOKED' | 'LAST_ADMIN' | 'INVALID_USER',
    message: string,
  ) {
    super(message);
    this.name = 'UserRefused';
  }
}
