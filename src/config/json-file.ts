import { readFileSync } from 'node:fs';

/**
 * A JSON file's text without the byte-order mark Windows editors put before UTF-8 (Notepad, PowerShell's
 * `Out-File -Encoding utf8`): JSON.parse refuses it as an invisible "Unexpected token", where the bank files
 * and CSVs beside it are read with it.
 */
export function jsonFileText(file: string): string {
  const text = readFileSync(file, 'utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
