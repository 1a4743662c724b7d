import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture } from './api-support';

/**
 * `after` is the `next` of the page before, base64url. Its decoding skipped whatever is not of the alphabet,
 * so a cursor garbled in transit or by hand (a character added, `=` padding, `+` and `/` of the other
 * alphabet, a space) was taken as some other cursor, or as the same one, and answered a page: a client with a
 * broken cursor got a page it did not ask for, not a 400. A cursor is now taken only as a page wrote it.
 */

let f: Awaited<ReturnType<typeof apiFixture>>;

beforeAll(async () => {
  f = await apiFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

describe('GET /api/exceptions?after= garbled', () => {
  it('is refused naming after; the cursor as the page wrote it is taken', async () => {
    const first = await f.get('?limit=1');
    expect(first.status).toBe(200);
    const next = String(first.body.next);
    expect(next).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await f.get(`?limit=1&after=${next}`);
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    for (const garbled of [
      `${next}!!`,
      `${next}=`,
      `*${next}`,
      `${next.slice(0, 10)}.${next.slice(10)}`,
      `${next}%20`,
    ]) {
      const r = await f.get(`?limit=1&after=${garbled}`);
      expect(r.status, garbled).toBe(400);
      expect(r.body.field, garbled).toBe('after');
    }
  });
});
