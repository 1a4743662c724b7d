import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SaxesParser } from 'saxes';
import { validateXML } from 'xmllint-wasm';

/**
 * Validation of a payment file against the stand-in schema (pain.001.001.09-subset.xsd, written from the message
 * definition: the published XSD is not in the repository and was not run), by xmllint-wasm and, where the
 * machine has it, Debian's xmllint.
 */

export const SCHEMA_PATH = path.join(__dirname, 'pain.001.001.09-subset.xsd');
const schema = () => readFileSync(SCHEMA_PATH, 'utf8');

export async function wasmErrors(xml: string): Promise<string[]> {
  const r = await validateXML({
    xml: [{ fileName: 'payment.xml', contents: xml }],
    schema: [{ fileName: 'pain.001.001.09-subset.xsd', contents: schema() }],
  });
  return r.valid ? [] : r.errors.map((e) => e.message);
}

export const debianXmllint = spawnSync('xmllint', ['--version']).status === 0;

/** Debian's xmllint --schema: null when it is not installed. */
export function debianErrors(xml: string): string[] | null {
  if (!debianXmllint) return null;
  const dir = mkdtempSync(path.join(tmpdir(), 'pain001-'));
  try {
    const file = path.join(dir, 'payment.xml');
    writeFileSync(file, xml);
    const r = spawnSync('xmllint', ['--noout', '--nonet', '--schema', SCHEMA_PATH, file], { encoding: 'utf8' });
    return r.status === 0 ? [] : r.stderr.split('\n').filter((l) => l.trim() !== '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of every element by its path of local names (e.g. `Document/CstmrCdtTrfInitn/GrpHdr/MsgId`), in order. */
export function texts(xml: string): { path: string; text: string; attributes: Record<string, string> }[] {
  const out: { path: string; text: string; attributes: Record<string, string> }[] = [];
  const stack: { name: string; text: string; attributes: Record<string, string> }[] = [];
  const p = new SaxesParser({ xmlns: true });
  p.on('opentag', (t) => {
    const attributes: Record<string, string> = {};
    for (const [k, v] of Object.entries(t.attributes)) attributes[k] = typeof v === 'string' ? v : v.value;
    stack.push({ name: t.local ?? t.name, text: '', attributes });
  });
  p.on('text', (s) => {
    const top = stack.at(-1);
    if (top) top.text += s;
  });
  p.on('closetag', () => {
    const top = stack.pop()!;
    out.push({ path: [...stack.map((s) => s.name), top.name].join('/'), text: top.text, attributes: top.attributes });
  });
  p.write(xml).close();
  return out;
}
