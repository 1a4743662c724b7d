import { describe, expect, it } from 'vitest';
import { contentWidths } from '../../src/export/nightly/table';

/**
 * A sheet's column widths are measured over all its rows. A day with a few hundred thousand open rows (a
 * month far larger than 1M payments, or one that went badly) must still give widths: a spread of that many
 * arguments into Math.max overflows the stack.
 */
describe('contentWidths', () => {
  it('measures half a million rows, the widest cell setting the width', () => {
    const rows = Array.from({ length: 500_000 }, (_, i) => [i === 123_456 ? 'x'.repeat(40) : 'short', i]);
    const widths = contentWidths([{ header: 'Reference' }, { header: 'Row' }], rows);
    expect(widths[0]).toBe(42);
    expect(widths[1]).toBeGreaterThanOrEqual(String(499_999).length);
    // 12 s on an idle machine: the shared machine's load made 60 s too short
  }, 180_000);

  it('a column with no rows is as wide as its header allows', () => {
    const [width] = contentWidths([{ header: 'Sub-merchant' }], []);
    expect(width).toBeGreaterThanOrEqual('Sub-merchant'.length);
  });
});
