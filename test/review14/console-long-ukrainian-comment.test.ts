import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf, isEvent } from '../../src/events/catalog';
import { ExceptionCommented, exceptionStream } from '../../src/events/exception-events';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';
import { consoleLogin, consolePost, consoleServer } from '../review13/console-support';

/**
 * Review 14: the comment box takes 4,000 characters (the textarea's maxlength, the action's limit), and the
 * console is in Ukrainian as much as in English. A Cyrillic letter is two bytes of UTF-8 and six characters once
 * the browser percent-encodes the form, so a comment of 3,000 Ukrainian letters is some 18,000 bytes: past the
 * 16 KiB the console read of a form, it was taken for no form at all and refused 403 as a forged or expired
 * form ("Reload the page"), the text lost. The console now reads a form as large as its fields allow, and a
 * larger one is refused 413 saying so.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let id = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  id = await idOf(db.sql, 'order_not_at_psp');
  srv = await consoleServer(db.sql, store);
}, 120_000);

afterAll(async () => {
  await srv?.close();
  await store?.close();
  await db?.drop();
});

const comments = async () =>
  (await store.readStream(exceptionStream(id)))
    .filter((e) => isEvent(ExceptionCommented, e))
    .map((e) => dataOf(ExceptionCommented, e).text);

describe('review14: a long comment in Ukrainian from the console', () => {
  it('is recorded whole when within the 4,000 characters the box takes', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token, `/console/exceptions/${id}`);
    const sentence = 'Платіжна система підтвердила повернення коштів покупцеві; чекаємо виписку банку. ';
    const text = sentence
      .repeat(Math.ceil(3900 / sentence.length))
      .slice(0, 3900)
      .trim();
    expect(text.length).toBeLessThanOrEqual(4000);
    const r = await consolePost(srv.base, `/console/exceptions/${id}/comment`, cookie, { _csrf: csrf, text });
    expect(r.status).toBe(303);
    expect(await comments()).toEqual([text]);
  });

  it('refuses a form larger than its fields allow as too large (413), not as a forged form', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token, `/console/exceptions/${id}`);
    const r = await consolePost(srv.base, `/console/exceptions/${id}/comment`, cookie, {
      _csrf: csrf,
      text: 'я'.repeat(4000),
      padding: 'я'.repeat(20_000),
    });
    expect(r.status).toBe(413);
    expect(await r.text()).not.toContain('expired');
    expect(await comments()).toHaveLength(1);
  });
});
