import type { Role } from '../events/people-events';

/**
 * What each role may do. Roles are not a ladder all the way up: an approver can also do an analyst's work
 * (and may never approve what they proposed themselves: that is checked on the decision, not here), while an
 * administrator manages people, rules and jobs but decides no money — separation of duties.
 */
export const ACTIONS = {
  read: ['viewer', 'analyst', 'approver', 'admin'],
  'exception.assign': ['analyst', 'approver'],
  'exception.comment': ['analyst', 'approver'],
  'exception.resolve': ['analyst', 'approver'],
  'exception.propose': ['analyst', 'approver'],
  'exception.approve': ['approver'],
  'payout-run.create': ['analyst', 'approver'],
  'payout-run.approve': ['approver'],
  'payout-run.send': ['analyst', 'approver'],
  'payee.confirm': ['approver'],
  'users.manage': ['admin'],
  'rules.manage': ['admin'],
  'jobs.run': ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Action = keyof typeof ACTIONS;

export const ACTION_NAMES = Object.keys(ACTIONS) as Action[];

export function may(role: Role, action: Action): boolean {
  return (ACTIONS[action] as readonly Role[]).includes(role);
}
