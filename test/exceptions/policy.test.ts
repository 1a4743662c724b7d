import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { DEFAULT_EXCEPTION_POLICY, severityOf } from '../../src/exceptions/severity';

/** RECON_CONFIG's `exceptions` section: read over the defaults, every problem named by its field. */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-exceptions-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configWith(section: unknown) {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ exceptions: section }));
  return loadConfig({ RECON_CONFIG: file });
}

describe('the exceptions section of RECON_CONFIG', () => {
  it('overrides only what it sets', () => {
    const r = configWith({
      writeOff: { approvalAbove: '5000' },
      slaHours: { critical: 8 },
      amountAtLeast: { medium: 50_000 },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const { policy, issues } = exceptionPolicyOf(r.config.exceptions);
    expect(issues).toEqual([]);
    expect(policy.writeOff).toEqual({ account: DEFAULT_EXCEPTION_POLICY.writeOff.account, approvalAbove: 5000n });
    expect(policy.slaHours).toEqual({ ...DEFAULT_EXCEPTION_POLICY.slaHours, critical: 8 });
    // 600.00 in doubt on a type whose default is low: medium under the configured threshold, low by default
    const d = { type: 'order_not_at_psp', values: { order_amount: '60000' }, currency: 'UAH', detected_at: null };
    expect([severityOf(d, new Date(), policy), severityOf(d, new Date())]).toEqual(['medium', 'low']);
  });

  it('refuses a wrong field by its path, and thresholds out of order', () => {
    const r = configWith({ writeOff: { approvalAbove: '1.5' }, slaHour: {} });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const problems = r.issues.map((i) => i.problem).join('\n');
    expect(problems).toMatch(/exceptions\.writeOff\.approvalAbove: /);
    expect(problems).toMatch(/exceptions\.: Unrecognized key: "slaHour"|slaHour/);
    expect(exceptionPolicyOf({ amountAtLeast: { high: 1n } }).issues).toEqual([
      'exceptions.amountAtLeast: expected medium ≤ high ≤ critical',
    ]);
  });
});
