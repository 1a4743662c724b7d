import { describe, expect, it } from 'vitest';
import {
  normalizedPeriodRecord,
  normalizedRegisterRecord,
  normalizedWebhook,
  paymentStream,
  rejectionStream,
  syncStream,
} from '../../src/events/ingest-events';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import type { PspClient } from '../../src/psp/client';
import { createArrayScanner, jsonArrayItems } from '../../src/psp/json';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload, type ParseResult } from '../../src/psp/parse';
import { useTestStore } from '../support/db';
import { eventsSince } from './http';
import { UNSTORABLE } from '../fuzz/oracle';
import { NOW, periodCases, registerCases, webhookPayloadCases, type RecordCase } from './records.cases';

const parsers = {
  register: {
    cases: registerCases,
    parse: (t: string) => parseRegisterRecord(t, { now: NOW }),
    schema: normalizedRegisterRecord,
  },
  period: {
    cases: periodCases,
    parse: (t: string) => parsePeriodRecord(t, { now: NOW }),
    schema: normalizedPeriodRecord,
  },
  webhook: {
    cases: webhookPayloadCases,
    parse: (t: string) => parseWebhookPayload(t, { now: NOW }),
    schema: normalizedWebhook,
  },
} as const;

function checkOutcome(c: RecordCase, r: ParseResult<unknown>, schema: { parse(v: unknown): unknown }) {
  if (!c.expect.ok) {
    expect(r, `expected a refusal naming ${c.expect.field}`).toMatchObject({ ok: false, field: c.expect.field });
    if (!r.ok) {
      if (c.expect.reason) expect(r.reason).toMatch(c.expect.reason);
      // The reason and field are stored in a SourceRecordRejected: plain, storable, short text.
      expect(`${r.field} ${r.reason}`).not.toMatch(UNSTORABLE);
      expect(r.reason.length).toBeLessThan(300);
    }
    return;
  }
  expect(r, r.ok ? '' : `refused: ${r.field}: ${r.reason}`).toMatchObject({ ok: true });
  if (!r.ok) return;
  // What is accepted is exactly the event data's shape, and survives JSON (it is stored as jsonb).
  expect(schema.parse(r.value)).toEqual(r.value);
  expect(JSON.parse(JSON.stringify(r.value))).toEqual(r.value);
  if (c.expect.value) expect(r.value).toMatchObject(c.expect.value);
}

for (const [kind, { cases, parse, schema }] of Object.entries(parsers)) {
  describe(`${kind} records: the corpus`, () => {
    it('has distinct case names', () => {
      expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    });
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      checkOutcome(c, parse(c.text), schema);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// A register body: the corpus as one streamed report

/** Cases whose text is one JSON value structurally (so it can sit inside an array); the others break the stream. */
function embeddable(cases: readonly RecordCase[]): RecordCase[] {
  return cases.filter((c) => {
    try {
      const s = createArrayScanner();
      const out = s.push(`[${c.text}]`);
      s.end();
      return out.length === 1 && out[0] === c.text;
    } catch {
      return false;
    }
  });
}

/** The body cut into chunks of the given sizes (bytes), cycling, so that UTF-8 sequences are split too. */
async function* chunked(body: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let i = 0;
  for (let n = 0; i < body.length; n++) {
    const size = Math.max(1, sizes[n % sizes.length]!);
    yield body.subarray(i, i + size);
    i += size;
  }
}

const bodyOf = (texts: readonly string[], sep = ',\n  ') => new TextEncoder().encode(`[\n  ${texts.join(sep)}\n]`);

async function collect(body: AsyncIterable<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const t of jsonArrayItems(body)) out.push(t);
  return out;
}

describe('a register body mixing valid and invalid records', () => {
  const cases = embeddable(registerCases);

  it('embeds most of the corpus (the others are stream-level faults, below)', () => {
    expect(cases.length).toBeGreaterThan(registerCases.length * 0.9);
    expect(registerCases.length - cases.length).toBeLessThan(10);
  });

  for (const sizes of [[1], [7, 3, 64], [4096]]) {
    it(`gives back every record exactly, valid ones accepted and invalid ones refused with their raw text (chunks of ${sizes.join('/')} bytes)`, async () => {
      const texts = await collect(chunked(bodyOf(cases.map((c) => c.text)), sizes));
      expect(texts).toEqual(cases.map((c) => c.text));
      const accepted = texts.filter((t) => parseRegisterRecord(t, { now: NOW }).ok);
      const refused = texts.filter((t) => !parseRegisterRecord(t, { now: NOW }).ok);
      expect(accepted).toEqual(cases.filter((c) => c.expect.ok).map((c) => c.text));
      expect(refused).toEqual(cases.filter((c) => !c.expect.ok).map((c) => c.text));
    });
  }

  it('reads the {count, records} shape the same way', async () => {
    const texts = cases.map((c) => c.text);
    const body = new TextEncoder().encode(
      `{"count": ${texts.length}, "meta": {"a": [1, [2]]}, "records": [${texts.join(',')}]}`,
    );
    expect(await collect(chunked(body, [13]))).toEqual(texts);
  });
});

describe('stream-level faults of a report body (the whole window fails, clearly, and is read again next run)', () => {
  const valid = registerCases.find((c) => c.name === 'the valid record')!.text;
  const enc = (s: string) => new TextEncoder().encode(s);
  const cat = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let i = 0;
    for (const p of parts) {
      out.set(p, i);
      i += p.length;
    }
    return out;
  };
  const streamCases: readonly (readonly [string, Uint8Array, RegExp])[] = [
    [
      'invalid UTF-8 (a lone continuation byte) inside a record',
      cat(enc(`[${valid.slice(0, 20)}`), new Uint8Array([0x80]), enc(`${valid.slice(20)}]`)),
      /not valid UTF-8/,
    ],
    [
      'invalid UTF-8 (an overlong encoding of "/")',
      cat(enc(`[${valid},"`), new Uint8Array([0xc0, 0xaf]), enc('"]')),
      /not valid UTF-8/,
    ],
    [
      'invalid UTF-8 (a surrogate encoded in UTF-8)',
      cat(enc(`[${valid},"`), new Uint8Array([0xed, 0xa0, 0x80]), enc('"]')),
      /not valid UTF-8/,
    ],
    ['UTF-8 cut at the end of the body', cat(enc(`[${valid},"`), new Uint8Array([0xe2, 0x82])), /UTF-8|truncated/],
    ['truncated inside a record', enc(`[${valid},${valid.slice(0, 30)}`), /truncated/],
    ['truncated after a comma', enc(`[${valid},`), /truncated/],
    ['no closing bracket', enc(`[${valid}`), /truncated/],
    ['empty body', enc(''), /empty/],
    ['an error object instead of records', enc('{"message": "internal error", "code": 500}'), /no array member/],
    ['garbage between records', enc(`[${valid} garbage ${valid}]`), /expected ',' or ']'/],
    ['a bare word as a record', enc(`[${valid}, NaN]`), /unexpected character/],
    ['a second document after the array', enc(`[${valid}] [${valid}]`), /after the end/],
    ['an element larger than 1 MiB', enc(`[${valid},{"description":"${'x'.repeat(1_100_000)}"}]`), /larger than/],
  ];
  it.each(streamCases)('%s', async (_name, body, reason) => {
    await expect(collect(chunked(body, [5, 4096]))).rejects.toThrow(reason);
  });

  it('a record nested 100,000 levels deep is handed on whole and refused alone, not the report', async () => {
    const deep = '{"x":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    const texts = await collect(chunked(bodyOf([valid, deep, valid]), [1000]));
    expect(texts).toEqual([valid, deep, valid]);
    expect(parseRegisterRecord(texts[1]!, { now: NOW })).toMatchObject({
      ok: false,
      field: '(root)',
      reason: expect.stringMatching(/deeper than 32/),
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The same body through the real sync into the PostgreSQL event store

const POS_ID = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const project = {
  name: 'bad-input',
  posId: POS_ID,
  baseUrl: 'http://127.0.0.1:1',
  reportUrl: 'http://127.0.0.1:1',
  apiKey: 'k',
  apiSecret: 's',
  endpointsKey: 'e',
};

/** A PSP that serves the given register and period bodies for any window, streamed in small chunks. */
function fakePsp(register: Uint8Array, registerCount: number, period: Uint8Array): PspClient {
  const client: Partial<PspClient> = {
    project,
    startRegisterReport: async () => ({ reportId: 'report-bad-input', count: registerCount }),
    fetchRegisterReport: async () => ({ ready: true, records: jsonArrayItems(chunked(register, [97, 3])) }),
    periodTransactions: () => jsonArrayItems(chunked(period, [101])),
  };
  return client as PspClient;
}

describe('the corpus through recon sync into the event store', () => {
  const fx = useTestStore();

  // Read from the table (see eventsSince in ./http.ts: readAll hides events above the server-wide xmin).
  const allEvents = () => eventsSince(fx.db.sql, 0n);

  const deps = (register: Uint8Array, count: number, period: Uint8Array) => ({
    store: fx.store,
    projects: [project],
    log: silentLogger,
    timezone: 'UTC',
    reportMaxWaitMs: 1000,
    batchSize: 50,
    clientFor: () => fakePsp(register, count, period),
  });

  it('stores every valid record, records every invalid one with its raw text, and completes the window', async () => {
    const reg = embeddable(registerCases);
    const per = embeddable(periodCases);
    const report = await syncRange(deps(bodyOf(reg.map((c) => c.text)), reg.length, bodyOf(per.map((c) => c.text))), {
      from: '2024-05-01',
      to: '2024-05-02',
    });
    expect(report).toMatchObject({ completed: 1, failed: 0 });

    const events = await allEvents();
    const observed = events.filter((e) => e.stream.startsWith('payment-'));
    const rejected = events.filter((e) => e.stream === rejectionStream(POS_ID));
    const expectObserved = (type: string, cs: RecordCase[]) =>
      expect(new Set(observed.filter((e) => e.type === type).map((e) => (e.data as { raw: string }).raw))).toEqual(
        new Set(cs.filter((c) => c.expect.ok).map((c) => c.text)),
      );
    expectObserved('RegisterRecordObserved', reg);
    expectObserved('PeriodRecordObserved', per);
    // Each observation sits in its payment's stream, and holds the record verbatim (injection strings included).
    for (const e of observed) {
      const d = e.data as { raw: string; record: { paymentId: string } };
      expect(e.stream).toBe(paymentStream(POS_ID, d.record.paymentId));
    }
    const refused = [...reg.map((c) => ['register', c] as const), ...per.map((c) => ['period', c] as const)].filter(
      ([, c]) => !c.expect.ok,
    );
    expect(rejected).toHaveLength(new Set(refused.map(([s, c]) => `${s}|${c.text}`)).size);
    for (const [source, c] of refused) {
      const e = rejected.find(
        (r) =>
          (r.data as { raw: string; source: string }).raw === c.text &&
          (r.data as { source: string }).source === source,
      );
      expect(e, `${source} ${c.name}`).toBeDefined();
      expect((e!.data as { field: string }).field).toBe(c.expect.ok ? '' : c.expect.field);
    }
    const [completed] = (await fx.store.readStream(syncStream(POS_ID))).filter((e) => e.type === 'SyncWindowCompleted');
    expect(completed!.data).toMatchObject({
      registerRecords: reg.length,
      periodRecords: per.length,
      rejected: refused.length,
    });

    // Reading the same data again appends nothing: nothing was half-applied the first time.
    const before = events.filter((e) => e.stream !== syncStream(POS_ID)).length;
    await syncRange(deps(bodyOf(reg.map((c) => c.text)), reg.length, bodyOf(per.map((c) => c.text))), {
      from: '2024-05-01',
      to: '2024-05-02',
    });
    expect((await allEvents()).filter((e) => e.stream !== syncStream(POS_ID)).length).toBe(before);
  });

  it('a report that breaks mid-stream fails the window with a clear reason, keeping the records read before it (idempotent on the next run)', async () => {
    const valid = registerCases.find((c) => c.name === 'the valid record')!.text;
    const other = valid.replace('"102.50"', '"103.50"');
    const broken = new TextEncoder().encode(`[${valid},${other},{"paymentId": "x", "amount": "1`);
    const report = await syncRange(deps(broken, 3, bodyOf([])), { from: '2024-06-01', to: '2024-06-02' });
    expect(report).toMatchObject({ completed: 0, failed: 1 });
    expect(report.windows[0]!.reason).toMatch(/truncated/);
    const failed = (await fx.store.readStream(syncStream(POS_ID))).filter((e) => e.type === 'SyncWindowFailed');
    expect(failed.at(-1)!.data).toMatchObject({ reason: expect.stringMatching(/truncated/) });
  });

  // A record with a literal NUL character is refused by the parser (not JSON). PostgreSQL cannot store
  // U+0000, so the rejection keeps its raw text with the NUL written as \u0000 (rawEscaped): the window
  // completes, and the valid records beside it are stored.
  it('a record with a raw NUL character is rejected alone, its raw text kept in a storable form', async () => {
    const valid = registerCases.find((c) => c.name === 'the valid record')!.text.replace('"102.50"', '"104.50"');
    const withNul = valid.replace('"Order 1"', '"Order\u00001"');
    const report = await syncRange(deps(bodyOf([valid, withNul]), 2, bodyOf([])), {
      from: '2024-07-01',
      to: '2024-07-02',
    });
    expect(report).toMatchObject({ completed: 1, failed: 0 });
    const rejected = (await fx.store.readStream(rejectionStream(POS_ID))).map(
      (e) => e.data as { raw: string; field: string; rawEscaped?: boolean },
    );
    expect(
      rejected.some((r) => r.field === '(root)' && r.raw.includes('"Order\\u00001"') && r.rawEscaped === true),
    ).toBe(true);
  });
});
