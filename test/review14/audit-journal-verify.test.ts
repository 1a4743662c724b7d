import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';

/**
 * Review 14: recon had no tamper-evident trail of people's actions: a database administrator could UPDATE or
 * DELETE a decision in es_events (disabling its append-only trigger first) and nothing showed it. The audit
 * journal (projections/audit.ts) chains a hash of every people's action; `recon audit verify` reads the events
 * again and names the first position where the store and the journal part.
 */

const BIN = path.resolve('bin/recon.mjs');
let db: TestDatabase;
let store: EventStore;
let team: Team;
let psp: string;
let unpaid: string;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  dir = mkdtempSync(path.join(tmpdir(), 'recon-audit-'));
  writeFileSync(path.join(dir, 'recon.json'), JSON.stringify({ exceptions: { writeOff: { approvalAbove: '5000' } } }));
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recon(args: string[], token?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({
        databaseUrl: db.url,
        extra: {
          RECON_LOG_LEVEL: 'error',
          RECON_CONFIG: path.join(dir, 'recon.json'),
          ...(token ? { RECON_TOKEN: token } : {}),
        },
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const PEOPLE_TYPES = [
  'UserAdded',
  'ExceptionAssigned',
  'ExceptionCommented',
  'ExceptionDecisionProposed',
  'ExceptionDecisionApproved',
  'DiscrepancyAccepted',
];

/** One stored event of a type: its id and its position as the store gives it ("commit/prepare"). */
async function stored(type: string): Promise<{ id: string; position: string; data: string }> {
  const [r] = await db.sql<{ id: string; position: string; data: string }[]>`
    select event_id::text as id, transaction_id::text || '/' || global_position::text as position, data::text as data
    from es_events where type = ${type} order by transaction_id, global_position limit 1`;
  return r!;
}

/** As a database administrator would: past the append-only triggers. */
async function asAdministrator(statement: string, params: string[] = []): Promise<void> {
  await db.sql.begin(async (tx) => {
    await tx.unsafe('alter table es_events disable trigger user');
    await tx.unsafe(statement, params);
    await tx.unsafe('alter table es_events enable trigger user');
  });
}

const journal = () =>
  db.sql<Record<string, unknown>[]>`
    select seq::int as seq, position_text, event_id, type, stream, actor, at, event_hash, chain from recon.audit_journal j order by j.seq`;

const headOf = (stdout: string) => /^head ([0-9a-f]{64})$/m.exec(stdout)?.[1];
let noted = '';

describe('review14: the audit journal and recon audit verify', () => {
  it('chains every people’s action in the log’s order; verify is intact with the count and the head; a replay gives the same rows', async () => {
    const steps: Array<[string[], string]> = [
      [['exceptions', 'assign', unpaid, '--assignee', 'ivan'], team.analyst.token],
      [['exceptions', 'comment', unpaid, '--text', 'called the customer'], team.analyst.token],
      [['exceptions', 'accept', psp, '--decision', 'write_off', '--note', 'PSP will not pay'], team.analyst.token],
      [['exceptions', 'approve', psp, '--note', 'agreed'], team.approver.token],
    ];
    for (const [args, token] of steps) {
      const r = await recon(args, token);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    const projected = await recon(['project']);
    expect(projected.code, projected.stderr).toBe(0);

    const [{ n }] = (await db.sql<{ n: number }[]>`
      select count(*)::int as n from es_events where type = any(${PEOPLE_TYPES})`) as unknown as [{ n: number }];
    const rows = await journal();
    expect(rows).toHaveLength(n);
    // every link is sha256(previous chain || this row's hash), the first on the empty chain
    let previous = '';
    for (const r of rows) {
      expect(r.chain).toBe(
        createHash('sha256')
          .update(`${previous}${String(r.event_hash)}`)
          .digest('hex'),
      );
      previous = String(r.chain);
    }
    const byType = (t: string) => rows.filter((r) => r.type === t).map((r) => r.actor);
    expect(byType('ExceptionCommented')).toEqual(['ivan']);
    expect(byType('ExceptionDecisionApproved')).toEqual(['anna']);
    expect(byType('DiscrepancyAccepted')).toEqual(['anna']);
    expect(byType('UserAdded')).toEqual(['bootstrap', 'olena', 'olena', 'olena', 'olena']);

    const ok = await recon(['audit', 'verify']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`audit journal intact: ${n} people's actions`);
    noted = headOf(ok.stdout)!;
    expect(noted).toBe(previous);

    const rebuilt = await recon(['project', '--rebuild', 'audit']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(await journal()).toEqual(rows);
    const again = await recon(['audit', 'verify', '--expect-head', noted]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`the noted head is entry ${n} `);
  }, 600_000);

  it('an UPDATE of one stored decision is named by its position; put back, the head is the one noted', async () => {
    const comment = await stored('ExceptionCommented');
    await asAdministrator(
      `update es_events set data = replace(data::text, 'called the customer', 'nothing to see')::json
      where event_id = $1::uuid`,
      [comment.id],
    );
    const r = await recon(['audit', 'verify']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`NOT intact at position ${comment.position}`);
    expect(r.stdout).toContain(comment.id);
    expect(r.stdout).toMatch(/altered/);

    await asAdministrator('update es_events set data = $2::text::json where event_id = $1::uuid', [
      comment.id,
      comment.data,
    ]);
    const back = await recon(['audit', 'verify', '--expect-head', noted]);
    expect(back.code, back.stdout).toBe(0);
    expect(headOf(back.stdout)).toBe(noted);
  }, 300_000);

  it('an event inserted among the journaled ones is named by its position', async () => {
    const comment = await stored('ExceptionCommented');
    const [{ id }] = (await db.sql<{ id: string }[]>`select gen_random_uuid()::text as id`) as unknown as [
      { id: string },
    ];
    // in the comment's own transaction: it sorts before the journal's checkpoint, as if it had always been there
    await asAdministrator(
      `insert into es_events (transaction_id, event_id, stream_id, stream_revision, type, version, data, metadata, content_hash, recorded_at)
       select transaction_id, $2::uuid, stream_id, 999, type, version, data, metadata, content_hash, recorded_at
       from es_events where event_id = $1::uuid`,
      [comment.id, id],
    );
    const [{ position }] = (await db.sql<{ position: string }[]>`
      select transaction_id::text || '/' || global_position::text as position from es_events where event_id = ${id}::uuid`) as unknown as [
      { position: string },
    ];
    const r = await recon(['audit', 'verify']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`NOT intact at position ${position}`);
    expect(r.stdout).toMatch(/inserted/);

    await asAdministrator('delete from es_events where event_id = $1::uuid', [id]);
    expect((await recon(['audit', 'verify'])).code).toBe(0);
  }, 300_000);

  it('a DELETE of one is named by its position; a journal rebuilt over it is caught by the head noted before', async () => {
    const accepted = await stored('ExceptionDecisionProposed');
    await asAdministrator('delete from es_events where event_id = $1::uuid', [accepted.id]);
    const r = await recon(['audit', 'verify']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`NOT intact at position ${accepted.position}`);
    expect(r.stdout).toMatch(/removed/);

    // whoever rewrites the journal too (here: rebuilt from the altered store) is caught only by a noted head
    expect((await recon(['project', '--rebuild', 'audit'])).code).toBe(0);
    expect((await recon(['audit', 'verify'])).code).toBe(0);
    const caught = await recon(['audit', 'verify', '--expect-head', noted]);
    expect(caught.code).toBe(1);
    expect(caught.stdout).toContain(`the noted head ${noted} is NOT in the chain`);
  }, 300_000);
});
