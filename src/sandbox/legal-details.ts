import type { StatementsConfig } from '../config/statements';
import { csvField } from './scenario';

/**
 * What the demo's statements say of the people in them, so that they read as a sub-merchant gets them: the
 * sandbox marketplace as the issuer, and each sandbox sub-merchant's legal name, tax id, address and language
 * (every other one Ukrainian, the first among them). Invented, and the same on every run.
 */

export const SANDBOX_ISSUER = {
  issuerName: 'ТОВ «Сендбокс Маркетплейс» (Sandbox Marketplace LLC)',
  issuerAddress: 'вул. Хрещатик, 22, Київ, 01001, Україна',
  issuerTaxId: '43210987',
  contact: 'payouts@sandbox-marketplace.example, +380 44 000 00 00',
  // one text serves statements in both languages (the setting has no language), so it says both
  dispute:
    'Оскаржити суму: напишіть протягом 30 днів від дати видачі, вказавши номер виписки. To dispute a figure: write within 30 days of the issue date, quoting the statement number.',
} as const;

/**
 * The demo's statement settings: the user's RECON_ISSUER_* / RECON_STATEMENT_* values where set, the sandbox
 * marketplace's for the rest (a demo needs no environment to show a complete header).
 */
export function demoStatementsConfig(configured: StatementsConfig): StatementsConfig {
  return {
    issuerName: configured.issuerName ?? SANDBOX_ISSUER.issuerName,
    issuerAddress: configured.issuerAddress ?? SANDBOX_ISSUER.issuerAddress,
    issuerTaxId: configured.issuerTaxId ?? SANDBOX_ISSUER.issuerTaxId,
    contact: configured.contact ?? SANDBOX_ISSUER.contact,
    dispute: configured.dispute ?? SANDBOX_ISSUER.dispute,
    language: configured.language,
  };
}

const LEGAL_COLUMNS = ['legal_name', 'tax_id', 'address', 'language'];

/** The legal details of the i-th sandbox sub-merchant (0-based), in its own language. */
export function sandboxLegalDetails(
  name: string,
  i: number,
): { legalName: string; taxId: string; address: string; language: 'uk' | 'en' } {
  const uk = i % 2 === 0;
  const taxId = String(30_000_000 + ((i * 7_919_117 + 1_234_567) % 9_000_000)).padStart(8, '0');
  return uk
    ? {
        legalName: `ФОП «${name}»`,
        taxId,
        address: `вул. Городоцька, ${10 + i}, Львів, 79000, Україна`,
        language: 'uk',
      }
    : {
        legalName: `${name} LLC`,
        taxId,
        address: `${100 + i} Sahaidachnoho St, Kyiv 04070, Ukraine`,
        language: 'en',
      };
}

/**
 * The sandbox's directory CSV (`sub_merchant_id,name,...`, src/sandbox/scenario.ts) with the legal columns
 * added to every row; the name is read as the CSV's second field.
 */
export function withLegalDetails(csv: string): string {
  const [head, ...rows] = csv.split('\n').filter((l) => l !== '');
  if (head === undefined) return csv;
  const out = [`${head},${LEGAL_COLUMNS.join(',')}`];
  rows.forEach((row, i) => {
    const name = nameOf(row);
    const d = sandboxLegalDetails(name, i);
    out.push(`${row},${[d.legalName, d.taxId, d.address, d.language].map(csvField).join(',')}`);
  });
  return `${out.join('\n')}\n`;
}

// the second field of a row the sandbox wrote: quoted with "" escapes when it holds a comma or a quote
function nameOf(row: string): string {
  const rest = row.slice(row.indexOf(',') + 1);
  if (!rest.startsWith('"')) return rest.slice(0, rest.indexOf(',') < 0 ? undefined : rest.indexOf(','));
  let name = '';
  for (let i = 1; i < rest.length; i++) {
    if (rest[i] === '"' && rest[i + 1] === '"') {
      name += '"';
      i++;
    } else if (rest[i] === '"') break;
    else name += rest[i];
  }
  return name;
}
