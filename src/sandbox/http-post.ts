import net from 'node:net';

/**
 * The stand-in PSP's POST over plain HTTP/1.1, on kept-alive connections of its own. It shares recon's
 * thread in `recon demo` and the month bench, where node:http's client cost three times recon's own
 * server per webhook (issue 26: a ClientRequest, its agent's bookkeeping, header checks and two writes per
 * POST); a real PSP's sending costs recon nothing. The answer's status is all it reads: the body is read
 * to its end (by length, chunks, or the connection's close) and dropped.
 */

export interface PostAnswer {
  /** the answer's status, or null when there was none (`error` says why) */
  readonly status: number | null;
  readonly error?: string;
  /** no byte came back on a kept-alive connection the server had closed meanwhile: the request was never read */
  readonly staleConnection: boolean;
}

interface Connection {
  readonly socket: net.Socket;
  readonly key: string;
  reused: boolean;
  error?: Error;
  onData?: (chunk: Buffer) => void;
  onGone?: () => void;
}

const IDLE = new Map<string, Connection[]>();

function connectionTo(host: string, port: number, key: string): Connection {
  const idle = IDLE.get(key);
  const kept = idle?.pop();
  if (kept) {
    kept.reused = true;
    kept.socket.ref();
    return kept;
  }
  const socket = net.connect({ host, port, noDelay: true });
  const c: Connection = { socket, key, reused: false };
  // bytes on an idle connection answer nothing that was asked: the connection is not to be trusted again
  socket.on('data', (chunk: Buffer) => (c.onData ? c.onData(chunk) : socket.destroy()));
  socket.on('error', (e) => {
    c.error = e;
  });
  socket.on('close', () => {
    const list = IDLE.get(key);
    const at = list?.indexOf(c) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    c.onGone?.();
  });
  return c;
}

function keepIdle(c: Connection): void {
  c.onData = undefined;
  c.onGone = undefined;
  // an idle connection does not hold the process open
  c.socket.unref();
  const list = IDLE.get(c.key);
  if (list) list.push(c);
  else IDLE.set(c.key, [c]);
}

/** POSTs `form` to a http: URL; resolves with the answer's status, never rejects. */
export function postForm(target: URL, form: string, timeoutMs: number): Promise<PostAnswer> {
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const port = Number(target.port || 80);
  const c = connectionTo(host, port, `${host}:${port}`);
  const reused = c.reused;
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const read = answerReader();
    const done = (out: PostAnswer, keep: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (keep) keepIdle(c);
      else {
        c.onData = undefined;
        c.onGone = undefined;
        c.socket.destroy();
      }
      resolve(out);
    };
    const timer = setTimeout(
      () => done({ status: null, error: `no answer within ${timeoutMs} ms`, staleConnection: false }, false),
      timeoutMs,
    );
    c.onData = (chunk) => {
      answered = true;
      const state = read.push(chunk);
      if (state === 'bad') done({ status: null, error: 'malformed answer', staleConnection: false }, false);
      else if (state === 'complete') done({ status: read.status(), staleConnection: false }, read.reusable());
    };
    c.onGone = () => {
      // an answer whose body runs to the connection's close ends here
      if (answered && read.endsAtClose()) done({ status: read.status(), staleConnection: false }, false);
      else
        done(
          { status: null, error: c.error?.message ?? 'socket hang up', staleConnection: reused && !answered },
          false,
        );
    };
    c.socket.write(
      `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(form)}\r\n` +
        `Connection: keep-alive\r\n\r\n${form}`,
    );
  });
}

type ReadState = 'more' | 'complete' | 'bad';

/** Reads one HTTP/1.x answer as its bytes come: the status line, the headers, then the body's end. */
function answerReader() {
  let buffer: Buffer = Buffer.alloc(0);
  let status = 0;
  let bodyAt = -1;
  let length: number | 'chunked' | 'close' = 0;
  let keepAlive = true;

  const head = (): ReadState => {
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return 'more';
      const lines = buffer.toString('latin1', 0, end).split('\r\n');
      const m = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]!);
      if (!m) return 'bad';
      status = Number(m[2]);
      // an interim answer (100 Continue) is followed by the real one
      if (status < 200) {
        buffer = buffer.subarray(end + 4);
        continue;
      }
      keepAlive = m[1] === '1';
      length = status === 204 || status === 304 ? 0 : 'close';
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line
          .slice(colon + 1)
          .trim()
          .toLowerCase();
        if (name === 'connection') keepAlive = value !== 'close' && (m[1] === '1' || value === 'keep-alive');
        else if (name === 'transfer-encoding' && value.endsWith('chunked')) length = 'chunked';
        else if (name === 'content-length' && length !== 'chunked') length = Number(value);
      }
      if (typeof length === 'number' && !(Number.isSafeInteger(length) && length >= 0)) return 'bad';
      bodyAt = end + 4;
      return body();
    }
  };

  /** where the answer ends, once known */
  let endAt = -1;
  const body = (): ReadState => {
    if (length === 'close') return 'more';
    if (length !== 'chunked') {
      endAt = bodyAt + length;
      return buffer.length >= endAt ? 'complete' : 'more';
    }
    // chunks: a hex size line, the chunk and its CRLF, to the zero-size chunk, its trailers and a blank line
    let at = bodyAt;
    for (;;) {
      const eol = buffer.indexOf('\r\n', at);
      if (eol < 0) return 'more';
      const size = Number.parseInt(buffer.toString('latin1', at, eol), 16);
      if (Number.isNaN(size)) return 'bad';
      if (size === 0) {
        const blank = buffer.indexOf('\r\n\r\n', eol);
        if (blank < 0) return 'more';
        endAt = blank + 4;
        return 'complete';
      }
      at = eol + 2 + size + 2;
      if (buffer.length < at) return 'more';
    }
  };

  return {
    push(chunk: Buffer): ReadState {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      return bodyAt < 0 ? head() : body();
    },
    status: () => status,
    /** a body without a length ends when the server closes the connection */
    endsAtClose: () => bodyAt >= 0 && length === 'close',
    // bytes past the answer answer nothing asked: such a connection is not kept
    reusable: () => keepAlive && length !== 'close' && buffer.length === endAt,
  };
}
