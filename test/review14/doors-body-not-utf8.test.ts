import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createExceptionsApi } from '../../src/http/exceptions-api';
import { strictForm } from '../../src/request-body';
import { directoryReader } from '../../src/people/authenticate';
import { bulkFixture, consoleLogin } from '../review13/console-support';

/**
 * Review 14: the console's forms and the JSON APIs decoded their bodies leniently, so bytes that are not UTF-8
 * (a comment typed in a legacy code page, `%FF` in a form) were stored as U+FFFD in the exception's stream: the
 * note recorded was not what was sent, and nothing said so. Such a body is now refused (the console: 400 with
 * words; the API: 400 naming the body), nothing written; the same text sent as UTF-8 is taken.
 */

let f: Awaited<ReturnType<typeof bulkFixture>>;
let api: Server;
let apiBase = '';

beforeAll(async () => {
  f = await bulkFixture();
  const handler = createExceptionsApi({
    sql: f.db.sql,
    store: f.store,
    directory: directoryReader(f.store, 0),
    policy: exceptionPolicyOf({}).policy,
  });
  api = createServer((req, res) => {
    void handler(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/exceptions`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (api ? api.close(() => resolve()) : resolve()));
  await f?.close();
});

const notes = async (id: string) =>
  (await f.store.readStream(`exception-${id}`)).map((e) => (e.data as { text?: string }).text).filter(Boolean);

describe('review14: a body that is not UTF-8', () => {
  it('console: a comment with %FF is refused with words, nothing written; the UTF-8 one is taken', async () => {
    const { cookie, csrf } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const post = (text: string) =>
      fetch(`${f.srv.base}/console/exceptions/${f.unpaid}/comment`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: `_csrf=${encodeURIComponent(csrf)}&text=${text}`,
        redirect: 'manual',
      });
    const bad = await post('caf%E9+au+lait');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('not UTF-8');
    expect(await notes(f.unpaid)).toEqual([]);
    const good = await post('caf%C3%A9+au+lait');
    expect(good.status).toBe(303);
    expect(await notes(f.unpaid)).toEqual(['café au lait']);
  });

  it('API: a JSON body with a byte that is not UTF-8 is refused naming the body, nothing written', async () => {
    const before = await notes(f.psp);
    const send = (body: Buffer) =>
      fetch(`${apiBase}/${f.psp}/comment`, {
        method: 'POST',
        headers: { authorization: `Bearer ${f.team.analyst.token}`, 'content-type': 'application/json' },
        body,
      });
    const bad = await send(Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: 'body' });
    expect(await notes(f.psp)).toEqual(before);
    const good = await send(Buffer.from('{"text":"café"}'));
    expect(good.status).toBe(200);
    expect(await notes(f.psp)).toEqual([...before, 'café']);
  });

  it('a form decodes as URLSearchParams does where its text is UTF-8', () => {
    for (const body of ['a=1&b=x+y&a=2', 'c=%F0%9F%92%B6&d=%zz&=e&f', 'g=😀 raw&h=50%25', ''])
      expect([...strictForm(body)!]).toEqual([...new URLSearchParams(body)]);
    expect(strictForm('x=%C3')).toBeNull();
  });
});
