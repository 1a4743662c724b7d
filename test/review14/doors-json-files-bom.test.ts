import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mappingFrom } from '../../src/cli/commands/bank';
import { loadConfig } from '../../src/config/env';
import { fixture } from '../ingest/bank/support';

/**
 * A JSON file saved by a Windows editor (Notepad, PowerShell's `Out-File -Encoding utf8`) begins with a UTF-8
 * byte-order mark. The bank statements and CSVs are read with one; RECON_CONFIG and `--mapping` were refused
 * as "not valid JSON" (the mapping's message quoting the invisible character), and the config's `exceptions`
 * and `alerts` sections, read on their own, were silently taken as empty.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review14-bom-'));
const BOM = '\uFEFF';

describe('a JSON file that begins with a byte-order mark', () => {
  it('RECON_CONFIG is read whole, its exceptions section included', () => {
    const exceptions = { slaHours: { low: 200, medium: 100, high: 40, critical: 20 } };
    const plain = path.join(dir, 'plain.json');
    const bom = path.join(dir, 'bom.json');
    writeFileSync(plain, JSON.stringify({ exceptions }));
    writeFileSync(bom, BOM + JSON.stringify({ exceptions }));
    const expected = loadConfig({ RECON_CONFIG: plain });
    expect(expected.ok).toBe(true);
    const r = loadConfig({ RECON_CONFIG: bom });
    expect(r.ok, r.ok ? '' : JSON.stringify(r.issues)).toBe(true);
    if (r.ok && expected.ok) {
      expect(r.config.exceptions).toEqual(expected.config.exceptions);
      expect(r.config.exceptions).toMatchObject({ slaHours: exceptions.slaHours });
    }
  });

  it('a --mapping file reads as the same mapping', () => {
    const plain = path.join(dir, 'mapping.json');
    copyFileSync(fixture('statement.mapping.json'), plain);
    const bom = path.join(dir, 'mapping-bom.json');
    writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(plain)]));
    expect(mappingFrom(bom)).toEqual(mappingFrom(plain));
  });
});
