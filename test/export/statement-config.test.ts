import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env';
import { statementsConfigFrom } from '../../src/config/statements';
import { slugOf } from '../../src/export/workbook/slug';
import { HOLD_REASON_TEXTS } from '../../src/export/payouts/holds';
import { holdReason } from '../../src/export/i18n/labels';
import { parseSubMerchantCsv } from '../../src/ingest/sub-merchants';

/**
 * What heads a statement comes from the configuration (RECON_ISSUER_*, RECON_STATEMENT_*) and the directory's
 * optional columns; a bad value is refused naming the variable or the column, and an old directory file stays
 * valid. File names carry a transliterated slug of the name.
 */

describe('statement configuration', () => {
  it('reads the issuer and the texts, and names the variable of a bad value', () => {
    const ok = statementsConfigFrom({
      RECON_ISSUER_NAME: 'ТОВ «Маркетплейс»',
      RECON_ISSUER_TAX_ID: '12345678',
      RECON_STATEMENT_LANGUAGE: 'uk',
    });
    expect(ok.issues).toEqual([]);
    expect(ok.config).toMatchObject({ issuerName: 'ТОВ «Маркетплейс»', issuerTaxId: '12345678', language: 'uk' });
    expect(statementsConfigFrom({}).config.language).toBe('en');
    const bad = loadConfig({ RECON_STATEMENT_LANGUAGE: 'de', RECON_ISSUER_NAME: 'A\u0007B' });
    expect(bad.ok).toBe(false);
    const issues = bad.ok ? [] : bad.issues;
    expect(issues.find((i) => i.variable === 'RECON_STATEMENT_LANGUAGE')?.problem).toContain('uk or en');
    expect(issues.find((i) => i.variable === 'RECON_ISSUER_NAME')?.problem).toContain('control characters');
  });

  it('takes the directory’s legal details and language, names a bad column, keeps old files valid', () => {
    const old = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days\nSM-1,Alpha,30\n', 'old.csv');
    expect(old.ok).toBe(true);
    const full = parseSubMerchantCsv(
      'sub_merchant_id,name,reserve_hold_days,legal_name,tax_id,address,language\n' +
        'SM-1,Квітка,30,"ТОВ ""Квітка""",87654321,"вул. Січових Стрільців, 5",UK\nSM-2,Beta,30,,,,\n',
      'new.csv',
    );
    expect(full.ok && full.rows).toEqual([
      expect.objectContaining({
        legalName: 'ТОВ "Квітка"',
        taxId: '87654321',
        address: 'вул. Січових Стрільців, 5',
        language: 'uk',
      }),
      expect.not.objectContaining({ legalName: expect.anything() }),
    ]);
    const bad = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days,language\nSM-1,Alpha,30,fr\n', 'bad.csv');
    expect(bad.ok ? [] : bad.issues).toEqual([
      expect.objectContaining({
        file: 'bad.csv',
        line: 2,
        column: 'language',
        message: expect.stringContaining('uk or en'),
      }),
    ]);
  });

  it('transliterates Ukrainian names into stable, file-safe slugs', () => {
    expect(slugOf('Квітка')).toBe('kvitka');
    expect(slugOf('ТОВ «Згода» Їжак Юрій')).toBe('tov-zghoda-yizhak-yurii');
    expect(slugOf('Café Ölmühle & Co.')).toBe('cafe-olmuhle-co');
    expect(slugOf('Квітка')).toBe(slugOf('Квітка'));
    expect(slugOf('!!!')).toBe('');
    expect(slugOf('a'.repeat(100))).toHaveLength(40);
  });

  it('gives every reason money is held in Ukrainian too', () => {
    for (const r of HOLD_REASON_TEXTS) {
      expect(holdReason(r, 'uk'), r).not.toBe(r);
      expect(holdReason(`${r} (reviewed: withheld)`, 'uk')).toContain('(розглянуто: утримано)');
      expect(holdReason(r, 'en')).toBe(r);
    }
  });
});
