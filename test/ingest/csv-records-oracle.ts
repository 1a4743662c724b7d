/**
 * The hand-written CSV reader the directory and the fee contract used before csv-parse (issue 24), kept as the
 * oracle of test/ingest/csv-records.test.ts: the records, their lines and the line of a refusal must not change.
 */
interface CsvRecord {
  readonly line: number;
  readonly fields: string[];
}

/** RFC 4180 records with the physical line each starts on; quoted fields may hold commas, quotes and newlines. */
export function oldParseCsvRecords(
  text: string,
): { ok: true; records: CsvRecord[] } | { ok: false; line: number; message: string } {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let start = 1;
  let quoted = false;
  let wasQuoted = false;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '' && !wasQuoted)) records.push({ line: start, fields });
    fields = [];
    field = '';
    wasQuoted = false;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = src[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          return {
            ok: false,
            line,
            message: 'unexpected character after a closing quote (a quote inside a quoted field is written "")',
          };
        }
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field.trim() !== '')
        return { ok: false, line, message: 'a quote in the middle of an unquoted field (quote the whole field)' };
      field = '';
      quoted = true;
      wasQuoted = true;
      i++;
      continue;
    }
    if (c === ',') {
      fields.push(field);
      field = '';
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && src[i + 1] === '\n' ? 2 : 1;
      line++;
      start = line;
      continue;
    }
    field += c;
    i++;
  }
  if (quoted) return { ok: false, line: start, message: 'a quoted field is not closed before the end of the file' };
  if (field !== '' || fields.length > 0 || wasQuoted) endRecord();
  return { ok: true, records };
}
