import { spawn } from 'node:child_process';
import ExcelJS from 'exceljs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from './support';

/** `recon exceptions …` and `recon discrepancies accept` as an operator types them, through the real binary. */

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
  // RECON_CONFIG's exceptions section: a write-off above 50.00 needs a second person
  dir = mkdtempSync(path.join(tmpdir(), 'recon-exceptions-'));
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

describe('recon exceptions', () => {
  it('lists, assigns, proposes, refuses what a role may not, bulk dry run, shows the history', async () => {
    const list = await recon(['exceptions', 'list', '--format', 'json', '--leg', 'orders'], team.viewer.token);
    expect(list.code, list.stderr).toBe(0);
    const items = (JSON.parse(list.stdout) as { items: Array<{ id: string; leg: string; state: string }> }).items;
    expect(items.map((x) => x.id)).toContain(unpaid);
    expect(new Set(items.map((x) => x.leg))).toEqual(new Set(['orders']));
    // the whole list is printed as it is read (a page at a time, through a spool): the bytes of one page holding it
    for (const format of ['json', 'table']) {
      const whole = await recon(['exceptions', 'list', '--format', format, '--no-catch-up'], team.viewer.token);
      const page = await recon(
        ['exceptions', 'list', '--format', format, '--limit', '1000', '--no-catch-up'],
        team.viewer.token,
      );
      expect(whole.code, whole.stderr).toBe(0);
      expect(whole.stdout.length).toBeGreaterThan(200);
      expect(whole.stdout).toBe(page.stdout);
    }
    for (const limit of [[], ['--limit', '5']]) {
      const bad = await recon(['exceptions', 'list', '--state', 'bogus', ...limit, '--no-catch-up'], team.viewer.token);
      expect(bad.code).toBe(EXIT_CODE.usage);
      expect(bad.stderr).toMatch(/--state: expected one of open, /);
      expect(bad.stdout).toBe('');
    }

    const assigned = await recon(['exceptions', 'assign', psp, '--assignee', 'ivan'], team.analyst.token);
    expect(assigned.code, assigned.stderr).toBe(0);
    expect(assigned.stdout).toMatch(new RegExp(`^${psp}: assign to ivan, due \\S+ \\(by ivan\\)`));

    const proposed = await recon(
      ['exceptions', 'accept', psp, '--decision', 'write_off', '--note', 'PSP will not pay'],
      team.analyst.token,
    );
    expect(proposed.code, proposed.stderr).toBe(0);
    expect(proposed.stdout).toContain("propose write_off (needs a second person's approval)");

    const refused = await recon(['exceptions', 'approve', psp, '--note', 'ok'], team.analyst.token);
    expect(refused.code).toBe(EXIT_CODE.usage);
    expect(refused.stderr).toContain('ivan is an analyst; exception.approve is not theirs');

    const badCode = await recon(
      ['exceptions', 'resolve', unpaid, '--reason-code', 'soon', '--note', 'x'],
      team.analyst.token,
    );
    expect(badCode.code).toBe(EXIT_CODE.usage);
    expect(badCode.stderr).toContain('--reason-code: expected one of explained_elsewhere');

    const dry = await recon(
      ['exceptions', 'bulk', 'comment', '--leg', 'orders', '--reason', 'month-end', '--dry-run'],
      team.analyst.token,
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would comment: ${unpaid}`);
    expect(dry.stdout).toMatch(new RegExp(`${items.length} would change, 0 skipped\\n$`));

    const table = await recon(
      ['exceptions', 'list', '--state', 'pending_approval', '--no-catch-up'],
      team.viewer.token,
    );
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(
      /^state\s+severity\s+due\s+amount in doubt\s+leg\s+type\s+assignee\s+last action\s+id\n/,
    );
    expect(table.stdout).toMatch(
      new RegExp(`^pending_approval .* 100\\.00 UAH +psp +amount_mismatch +ivan .*${psp}\n1 exception\n$`, 'm'),
    );

    const shown = await recon(['exceptions', 'show', psp], team.viewer.token);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('state pending_approval');
    expect(shown.stdout).toMatch(/ivan {2}assigned\n.* ivan {2}proposed: PSP will not pay/);
  }, 900_000);

  it('recon discrepancies accept signs with RECON_TOKEN, never a typed name', async () => {
    const none = await recon(['discrepancies', 'accept', unpaid, '--note', 'x']);
    expect(none.code).toBe(EXIT_CODE.usage);
    expect(none.stderr).toContain('RECON_TOKEN: not set');
    const by = await recon(['discrepancies', 'accept', unpaid, '--note', 'x', '--by', 'Olena'], team.analyst.token);
    expect(by.code).toBe(EXIT_CODE.usage);
    expect(by.stderr).toMatch(/unknown option '--by'/);
  }, 600_000);

  it('recon exceptions import FILE --dry-run lists what the sheet would do, by row', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Decisions');
    ws.addRow(['id', 'action', 'note']);
    ws.addRow([unpaid, 'comment', 'called the customer']);
    const file = path.join(dir, 'decisions.xlsx');
    await wb.xlsx.writeFile(file);
    const r = await recon(['exceptions', 'import', file, '--dry-run'], team.analyst.token);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`row 2: would comment: ${unpaid}\n1 row would change\n`);
  }, 600_000);
});
