import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/console/html';
import { languageOf, money, when } from '../../src/console/i18n';

/** The console's one escaping template and its words for money, time and language. */

describe('html`…`', () => {
  it('escapes every interpolation, in text and in quoted attributes', () => {
    const hostile = `"'><script>alert(1)</script>&`;
    const out = html`<p title="${hostile}">${hostile}</p>`.text;
    expect(out).toBe(
      '<p title="&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;">&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;</p>',
    );
  });

  it('keeps fragments it built, joins lists, renders nothing for null, undefined and booleans', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`${inner}${['<', html`<br>`]}${null}${undefined}${false}${true}${0}${12n}`.text).toBe(
      '<b>&lt;i&gt;</b>&lt;<br>012',
    );
    expect(html`${raw('<hr>')}`.text).toBe('<hr>');
  });

  it('replaces NUL and the C0 controls HTML cannot carry; keeps tabs, newlines and bidi marks as text', () => {
    expect(escapeHtml('a\u0000b\u0007c\td\ne\u202Ef')).toBe('a\ufffdb\ufffdc\td\ne\u202Ef');
  });
});

describe('words, money and time', () => {
  it("formats bigint minor units exactly in the currency's own format", () => {
    expect(money(132461n, 'UAH', 'en')).toBe('UAH\u00a01,324.61');
    expect(money(132461n, 'UAH', 'uk')).toBe('1\u00a0324,61\u00a0₴');
    expect(money(-5n, 'EUR', 'en')).toBe('-€0.05');
    // beyond a float's exact range: still every digit
    expect(money(123456789012345678901n, 'USD', 'en')).toBe('US$1,234,567,890,123,456,789.01');
    expect(money(100n, null, 'en')).toBe('1.00');
  });

  it('writes times in the business time zone', () => {
    expect(when(new Date('2026-03-29T00:30:00Z'), 'Europe/Kyiv', 'en')).toBe('2026-03-29 02:30');
    expect(when('2026-03-29T01:30:00Z', 'Europe/Kyiv', 'uk')).toBe('29.03.2026 04:30');
  });

  it("takes the user's choice, else the browser's preference by weight, else English", () => {
    expect(languageOf('uk', 'en')).toBe('uk');
    expect(languageOf(undefined, 'de-DE, uk;q=0.8, en;q=0.5')).toBe('uk');
    expect(languageOf(undefined, 'en;q=0.9, uk;q=0.1')).toBe('en');
    expect(languageOf(undefined, 'uk;q=0, fr')).toBe('en');
    expect(languageOf('xx', undefined)).toBe('en');
  });
});
