import { DateTime } from 'luxon';
import { authenticate } from './authentication';
import { answerJson, HttpError, parseBody, streamArray, type Exchange, type SandboxRoute } from './http-answers';
import type { Operation, PosCredentials, SandboxStatus } from './model';
import { DEFAULT_REGISTER_FIELDS, REGISTER_FIELDS, registerRowCount, registerRows, type RegisterField } from './render';
import { operationsIn, type Report, type SandboxWorld } from './sandbox-world';

/** The register report (streaming-report): started for a period, polled until ready, fetched as one array. */

export const STATUSES: readonly SandboxStatus[] = ['init', 'pending', 'success', 'failure'];
const METHODS = ['auth', 'purchase', 'capture', 'void', 'p2p', 'credit', 'lookup', 'refund', 'dispute', 'recurrent'];
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const MAX_PERIOD_MS = 31 * 24 * 3600_000;

export const REGISTER_ROUTES: readonly SandboxRoute[] = [
  {
    method: 'POST',
    pattern: /^\/reports\/streaming-report\/start$/,
    name: 'register-start',
    handle: async (world, ctx) => {
      const creds = authenticate(world, ctx.req, ctx.body, false);
      const report = await startReport(world, creds, parseBody(ctx));
      world.reports.set(report.id, report);
      world.stats.reportsStarted++;
      answerJson(ctx, 200, { report_id: report.id, count: report.count });
    },
  },
  {
    method: 'GET',
    pattern: /^\/reports\/streaming-report\/fetch\/([^/]+)$/,
    name: 'register-fetch',
    handle: (world, ctx, m) => fetchReport(world, ctx, decodeURIComponent(m[1]!)),
  },
];

async function fetchReport(world: SandboxWorld, ctx: Exchange, reportId: string): Promise<void> {
  const { faults, stats } = world;
  const creds = authenticate(world, ctx.req, ctx.body, false);
  const report = world.reports.get(reportId);
  if (!report || report.posId !== creds.posId) throw HttpError(404, 'report_not_found', 'No such report');
  stats.reportFetches++;
  if (faults.reportNeverReady || report.polls < faults.reportNotReadyPolls) {
    report.polls++;
    stats.faults.notReady++;
    answerJson(ctx, faults.notReadyStatus, { message: 'Report is not ready yet', code: 'report_not_ready' });
    return;
  }
  report.fetches++;
  const lateStatusChange = faults.registerChangesBetweenFetches && report.fetches >= 2;
  const projectName = `sandbox-${report.posId.slice(0, 8)}`;
  const rows = (function* () {
    for (const op of operationsIn(world, report.posId, report.from, report.to)) {
      if (!reportWants(report, op)) continue;
      for (const row of registerRows(op, {
        fields: report.fields,
        projectName,
        entityName: 'Sandbox Marketplace LLC',
        lateStatusChange,
      })) {
        stats.registerRowsServed++;
        yield row;
      }
    }
  })();
  await streamArray(ctx, rows);
}

const reportWants = (report: Report, op: Operation) =>
  (!report.statuses || report.statuses.includes(op.status)) && (!report.methods || report.methods.includes(op.method));

/** operations counted between two turns of the event loop: a month's count takes a while on a shared thread */
const COUNT_SLICE = 5_000;

async function startReport(world: SandboxWorld, creds: PosCredentials, body: unknown): Promise<Report> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw HttpError(400, 'validation_error', 'A JSON object is required');
  const b = body as Record<string, unknown>;
  if (typeof b.project_id !== 'string' || !b.project_id)
    throw HttpError(400, 'validation_error', 'project_id: required');
  if (b.project_id !== creds.posId)
    throw HttpError(403, 'forbidden', 'project_id does not belong to these credentials');
  const instant = (name: string): number => {
    const v = b[name];
    if (typeof v !== 'string' || !ISO_WITH_OFFSET.test(v) || Number.isNaN(Date.parse(v)))
      throw HttpError(400, 'validation_error', `${name}: ISO 8601 timestamp with offset required`);
    return Date.parse(v);
  };
  const from = instant('start_date');
  const to = instant('end_date');
  if (to <= from) throw HttpError(400, 'validation_error', 'end_date must be after start_date');
  if (to - from > MAX_PERIOD_MS) throw HttpError(400, 'period_too_long', 'The report period must not exceed 31 days');
  const list = (name: string, allowed: readonly string[]): string[] | null => {
    const v = b[name];
    if (v === undefined || v === null) return null;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !allowed.includes(x)))
      throw HttpError(400, 'validation_error', `${name}: array of ${allowed.join(', ')}`);
    return v as string[];
  };
  const statuses = list('statuses', STATUSES);
  const methods = list('methods', METHODS);
  const details = list('transaction_details', REGISTER_FIELDS);
  const fields = details?.length ? (details as RegisterField[]) : DEFAULT_REGISTER_FIELDS;
  const partial: Omit<Report, 'count'> = {
    id: world.liveRng.uuid(),
    posId: creds.posId,
    from,
    to: to + world.endShift,
    statuses,
    methods,
    fields,
    polls: 0,
    fetches: 0,
  };
  let count = 0;
  let seen = 0;
  // the count regenerates the whole period: in the demo the stand-in shares recon's thread, whose store
  // connections and webhook receiver must keep being served meanwhile (a 1M month counts for a minute or more)
  for (const op of operationsIn(world, creds.posId, from, partial.to)) {
    if (reportWants(partial as Report, op)) count += registerRowCount(op);
    if (++seen % COUNT_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  // Fault from the scenario's ground truth: reports covering these days announce one record too many.
  for (const day of world.scenario.countMismatchDays) {
    const noon = dayNoon(day, world.scenario.timezone);
    if (noon >= from && noon < partial.to) count++;
  }
  return { ...partial, count };
}

function dayNoon(day: string, zone: string): number {
  return DateTime.fromISO(day, { zone }).set({ hour: 12 }).toMillis();
}
