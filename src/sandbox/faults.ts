/** The sandbox's fault knobs: shares of requests answered with errors, delays, resets or cut answers. */

export interface Faults {
  /** share of requests answered 500/502/503 */
  serverErrorRate: number;
  /** share of requests answered 429 with Retry-After */
  tooManyRequestsRate: number;
  retryAfterSeconds: number;
  /** share of requests delayed by slowMs before being handled */
  slowRate: number;
  slowMs: number;
  /** share of requests whose connection is destroyed without an answer */
  resetRate: number;
  /** share of JSON answers cut in the middle (status 200, invalid JSON) */
  truncateRate: number;
  /** fetches answered report_not_ready before a report is served */
  reportNotReadyPolls: number;
  reportNeverReady: boolean;
  /** HTTP status of the report_not_ready answer (the interface shows only its body) */
  notReadyStatus: number;
  /** from the second fetch of a report on, pending operations show as success (a late status change) */
  registerChangesBetweenFetches: boolean;
  /** which requests the rate-based faults apply to (default: all) */
  appliesTo: (req: { method: string; path: string }) => boolean;
}

export const DEFAULT_FAULTS: Faults = {
  serverErrorRate: 0,
  tooManyRequestsRate: 0,
  retryAfterSeconds: 0,
  slowRate: 0,
  slowMs: 0,
  resetRate: 0,
  truncateRate: 0,
  reportNotReadyPolls: 1,
  reportNeverReady: false,
  notReadyStatus: 200,
  registerChangesBetweenFetches: false,
  appliesTo: () => true,
};
