import { bankSettingsOf, bankSettingsText } from './bank-settings';
import type { Projection, ProjectionContext } from './projection';
import type { BuildRow, RunnerDeps } from './runner-types';

/**
 * The settings a build applies events with (time zone, grace hours, bank settings), recorded with the build.
 * A build keeps its own while a new build with the current ones replaces it.
 */

/** The context a build applies events with: its recorded settings, the current ones where none are recorded. */
export function contextFor(
  deps: RunnerDeps,
  build: Pick<BuildRow, 'schema_name' | 'timezone' | 'grace_hours' | 'bank_settings'>,
): ProjectionContext {
  const bank = build.bank_settings != null ? bankSettingsOf(build.bank_settings) : deps.bank;
  return {
    schema: build.schema_name,
    timezone: build.timezone ?? deps.timezone,
    graceHours: build.grace_hours ?? deps.graceHours,
    ...(bank ? { bank } : {}),
  };
}

/** What differs from the current configuration (the build must be replaced), or undefined. */
export function settingsChanged(deps: RunnerDeps, b: BuildRow, p: Projection): string | undefined {
  const changed = [
    p.usesBank && b.bank_settings !== null && b.bank_settings !== bankSettingsText(deps.bank) ? 'bank settings' : '',
    b.timezone !== null && b.timezone !== deps.timezone ? `timezone ${b.timezone} → ${deps.timezone}` : '',
    b.grace_hours !== null && b.grace_hours !== deps.graceHours
      ? `grace hours ${b.grace_hours} → ${deps.graceHours}`
      : '',
  ].filter(Boolean);
  return changed.length ? changed.join(', ') : undefined;
}
