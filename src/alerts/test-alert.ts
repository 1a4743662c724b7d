import { randomUUID } from 'node:crypto';
import type { AlertsConfig } from '../config/alerts';
import { type ChannelDeps, type RaisedAlert, sendAlert } from './channels';

/**
 * `recon alerts test RULE`: a test alert sent to each channel of a rule at once, so that whoever set up a
 * receiver (its signature check, a Slack channel, a mailbox) sees one arrive. Nothing is recorded: it is not an
 * alert of the log, and it is sent every time it is asked for.
 */

export interface TestOutcome {
  readonly channel: string;
  readonly outcome: 'sent' | 'failed';
  /** the answer when sent, the error when not */
  readonly detail: string;
}

/** The rule's channels each sent a test alert; undefined when no rule has that name. */
export async function sendTestAlert(
  config: AlertsConfig,
  ruleName: string,
  deps: ChannelDeps,
  now: Date,
): Promise<TestOutcome[] | undefined> {
  const rule = config.rules.find((r) => r.name === ruleName);
  if (!rule) return undefined;
  const alert: RaisedAlert = {
    alertId: randomUUID(),
    rule: rule.name,
    kind: 'test',
    subject: 'test',
    title: `Test alert of rule ${rule.name}`,
    text: `This is a test of the alert rule ${rule.name} (${rule.on}); nothing needs doing.`,
    facts: { test: true },
    channels: [...rule.channels],
    coveredBy: null,
    raisedAt: now.toISOString(),
  };
  const out: TestOutcome[] = [];
  for (const name of rule.channels) {
    const channel = config.channels[name];
    try {
      if (!channel) throw new Error(`no channel named ${name}`);
      out.push({ channel: name, outcome: 'sent', detail: await sendAlert(alert, channel, deps, now) });
    } catch (e) {
      out.push({ channel: name, outcome: 'failed', detail: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}
