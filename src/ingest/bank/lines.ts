import { ReconError } from '../../errors';

/**
 * Decoded text cut into lines (LF, CRLF or a lone CR, as MT940 exports mix them), each at most `maxLength`
 * characters: a longer line is refused as soon as it is longer, so that memory stays flat whatever the file.
 */

/** A line longer than the limit: the reader names it (the line after the last one it was given). */
export class LineTooLong extends ReconError {
  readonly code = 'BANK_FILE_LINE_TOO_LONG';
  readonly kind = 'data';
  constructor(readonly maxLength: number) {
    super(`a line longer than ${maxLength} characters`);
    this.name = 'LineTooLong';
  }
}

export async function* linesOf(chunks: AsyncIterable<string>, maxLength: number): AsyncGenerator<string> {
  let rest = '';
  let skipLf = false;
  const BREAK = /[\r\n]/g;
  for await (const chunk of chunks) {
    let text = rest + chunk;
    if (skipLf && text.startsWith('\n')) text = text.slice(1);
    skipLf = false;
    let start = 0;
    BREAK.lastIndex = 0;
    for (let m = BREAK.exec(text); m !== null; m = BREAK.exec(text)) {
      const i = m.index;
      if (i - start > maxLength) throw new LineTooLong(maxLength);
      yield text.slice(start, i);
      let next = i + 1;
      if (text[i] === '\r') {
        if (next === text.length) skipLf = true;
        else if (text[next] === '\n') next++;
      }
      start = next;
      BREAK.lastIndex = next;
    }
    rest = text.slice(start);
    if (rest.length > maxLength) throw new LineTooLong(maxLength);
  }
  if (rest.length > 0) yield rest;
}
