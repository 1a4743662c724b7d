import { describe, expect, it } from 'vitest';
import { ROLES } from '../../src/events/people-events';
import { ACTION_NAMES, may } from '../../src/people/roles';

/**
 * Every action × every role, written out from issue 27's words: a viewer reads; an analyst assigns, comments,
 * resolves and proposes, drafts a payout run and sends an approved one to the bank; an approver approves what
 * needs a second person (and can do an analyst's work); an admin manages users, rules and jobs and decides no money.
 */
const EXPECTED: Record<string, readonly string[]> = {
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
};

describe('the role matrix', () => {
  it('names every action the spec names, and no other', () => {
    expect([...ACTION_NAMES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const action of Object.keys(EXPECTED))
    for (const role of ROLES)
      it(`${role} ${EXPECTED[action]!.includes(role) ? 'may' : 'may not'} ${action}`, () => {
        expect(may(role, action as (typeof ACTION_NAMES)[number])).toBe(EXPECTED[action]!.includes(role));
      });
});
