import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import {
  bridgeOf,
  figuresDigest,
  pdfBridgeLabel,
  plainHeader,
  type StatementFigures,
  type StatementMeta,
  type StatementPayoutSection,
} from '../../src/export/statements/figures';

/**
 * The statement PDF's bridge printed a label wider than its column cut with "…": in Ukrainian "= Сума до сплати
 * (коригування + невідображені місяці + до виплати − утримано + звіль…" and "Кінцеве сальдо (… − випла…", so the
 * document that leaves the company did not say what its amount was. A long label now goes on as many lines as it
 * needs, its amounts on the first.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-pdf-bridge-whole-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Shop',
  currency: 'UAH',
  opening: 10_000n,
  gross: 50_000n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 1_000n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 49_000n,
  operations: 0,
  adjustments: 500n,
  notStated: 700n,
  notStatedMonths: '2024-01',
  paidOut: 10_000n,
  closing: 50_200n,
};
// months never stated and money owed back: the longest labels the bridge has
const payout: StatementPayoutSection = {
  currency: 'UAH',
  reference: 'RS-sm-1-2024-03-UAH',
  held: 0n,
  released: 0n,
  broughtForward: 300n,
  amountDue: 49_900n,
  payable: 49_900n,
  holds: [],
  paid: [],
};
const meta: StatementMeta = {
  month: '2024-03',
  timezone: 'Europe/Kyiv',
  position: '1/1',
  figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', [f]),
};

/** The text of the bridge's label column of the first page (40 pt margin, 430 pt wide), its lines joined. */
function labelColumn(pdf: string): string {
  const args = ['-layout', '-f', '1', '-l', '1', '-x', '40', '-y', '0', '-W', '430', '-H', '595', pdf, '-'];
  return execFileSync('pdftotext', args, { encoding: 'utf8' }).replace(/\s+/g, ' ');
}

describe('review15: the statement PDF prints every bridge label whole', () => {
  it.each(['en', 'uk'] as const)('%s', async (language) => {
    const pdf = path.join(dir, `statement-${language}.pdf`);
    const source = { figures: [f], lines: async function* () {}, reserve: [], payouts: [payout] };
    await writeStatementPdf(pdf, source, meta, { ...plainHeader(meta), language });
    const text = labelColumn(pdf);
    expect(text).not.toContain('…');
    const labels = bridgeOf([f], [payout]).map((l) => pdfBridgeLabel(l, language));
    expect(labels.some((l) => l.length > 90)).toBe(true);
    for (const label of labels) expect(text).toContain(label);
  });
});
