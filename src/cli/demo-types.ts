import type { DemoCheck } from './demo-check';

/**
 * `recon demo`: the whole main job on the embedded default, against the sandbox PSP, with no
 * configuration. Every step is idempotent, so a second run appends nothing new and issues the same
 * statements (same position, same figures hash).
 */
export interface DemoOptions {
  readonly seed: string;
  readonly payments: number;
  readonly month?: string;
  readonly outDir: string;
  readonly print: (line: string) => void;
  readonly signal?: AbortSignal;
  /** told of each stage of the month when it ends, awaited (bench/month.ts measures the month by them) */
  readonly onStage?: (stage: DemoStage) => void | Promise<void>;
  /** the sandbox's webhook senders at once (default DEMO_WEBHOOK_SENDERS): each waits for its answer, so a commit holds at most this many */
  readonly webhookSenders?: number;
}

/** One stage of the month: its wall time and what it went through (events, records, lines). */
export interface DemoStage {
  readonly name: string;
  readonly ms: number;
  readonly items: number;
  readonly unit: string;
}

export interface DemoSummary {
  readonly month: string;
  readonly posId: string;
  readonly events: number;
  readonly sync: { windows: number; records: number; appended: number };
  readonly webhooks: { delivered: number; duplicates: number; lost: number; accepted: number; rejected: number };
  readonly healing: { requested: number };
  readonly projections: Record<string, number>;
  /** open (or accepted) discrepancies per type, money ones apart: what recon found */
  readonly discrepancies: Record<string, number>;
  /** per type, what the sandbox injected and recon must report open (PSP side and orders) */
  readonly groundTruth: Record<string, number>;
  /** the demo's own check, finding by finding (src/cli/demo-check.ts): passed when every one passed */
  readonly check: { readonly passed: boolean; readonly checks: readonly DemoCheck[] };
  /** order discrepancies found open and those the sandbox injected (order findings as orderFindingKey) */
  readonly orders: { found: string[]; expected: string[] };
  readonly statements: { files: string[]; position: string; figuresSha256: string; newRun: boolean };
  readonly nightlyReport: string;
  /** RECON_CONFIG with the demo's bank accounts, for the commands run after it (demo-bank.ts writeDemoConfig) */
  readonly configFile: string | null;
  /** the money loop: the sandbox bank's statements imported, payouts matched (src/cli/demo-bank.ts) */
  readonly money: {
    readonly files: { camt053: number; mt940: number; dir: string };
    readonly imported: { statements: number; entries: number; known: number };
    readonly refused: string;
    readonly discrepancies: Record<string, number>;
    readonly groundTruth: Record<string, number>;
    readonly paidOut: ReadonlyArray<{
      reference: string;
      payee: string;
      currency: string;
      amount: string;
      paidOut: string;
      status: string;
      paidOn: string | null;
    }>;
    /** every expected payout's status as the statements read it (paid-out.ts), beside the bank's ground truth */
    readonly payoutStatuses: { found: Record<string, number>; truth: Record<string, number>; file: string };
    /** the bank's charges booked as bank fees, beside those the bank took */
    readonly charges: {
      booked: number;
      bookedByCurrency: Record<string, string>;
      taken: number;
      takenByCurrency: Record<string, string>;
    };
  };
}

export const isMoneyType = (t: string) => t.startsWith('settlement_') || t.startsWith('payout_');

/**
 * The sandbox PSP's webhook deliveries at once. Each sender waits for its answer and each answer for its commit,
 * so one commit (one disk flush) holds at most this many: 32 made the month's webhooks stage 0.67 of its time
 * with 8 on an idle 2-core machine (docs/scale.md, "Webhooks and sync in the month, sixth session"); a PSP
 * delivers from many workers at once.
 */
export const DEMO_WEBHOOK_SENDERS = 32;
