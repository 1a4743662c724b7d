import type { Command } from 'commander';
import { printable } from '../../input-rules';
import { type Directory, readDirectory, type User } from '../../people/directory';
import { actorFor, addUser, revokeUser, rotateToken } from '../../people/manage';
import { UsageError } from '../errors';
import { withRuntime } from '../runtime';

/**
 * `recon users add|list|revoke|rotate` (docs/exceptions.md, "People and roles"). The person acting is the owner
 * of RECON_TOKEN; the very first user is added without one and must be an admin. A token is printed once, on
 * standard output alone, so that `recon users add … > token` keeps it out of the terminal's scrollback.
 */

const token = () => process.env.RECON_TOKEN || undefined;

function tokenNotice(id: string, secret: string): void {
  process.stderr.write(
    `the token of ${id} follows on standard output; it is shown this once and stored only as a hash\n`,
  );
  process.stdout.write(`${secret}\n`);
}

const json = (u: User) => ({
  id: u.id,
  name: u.name,
  role: u.role,
  status: u.revokedAt === null ? 'active' : 'revoked',
  addedBy: u.addedBy,
  addedAt: u.addedAt,
  tokenRotatedAt: u.tokenRotatedAt,
  tokenRotatedBy: u.tokenRotatedBy,
  revokedAt: u.revokedAt,
  revokedBy: u.revokedBy,
});

function table(dir: Directory): string {
  const head = ['id', 'name', 'role', 'status', 'added by', 'added at', 'token rotated at', 'rotated by'];
  const rows = [...dir.users.values()].map((u) =>
    [u.id, u.name, u.role, json(u).status, u.addedBy, u.addedAt, u.tokenRotatedAt ?? '', u.tokenRotatedBy ?? ''].map(
      (c) => printable(c, { oneLine: true }),
    ),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

export function register(program: Command): void {
  const group = program
    .command('users')
    .description(
      "the people who work recon and their roles; the one acting is RECON_TOKEN's owner (docs/exceptions.md)",
    );

  group
    .command('add')
    .argument('<id>', 'the user id: a lower-case letter, then up to 63 of a-z 0-9 . _ -; never reused')
    .requiredOption('--name <name>', 'the person’s name as shown in histories')
    .requiredOption('--role <role>', 'viewer, analyst, approver or admin')
    .description('add a user (the first one without RECON_TOKEN, as an admin) and print their token once')
    .action(async (id: string, opts: { name: string; role: string }) => {
      await withRuntime(async (rt) => {
        const r = await addUser(rt.store, token(), { id, name: opts.name, role: opts.role });
        tokenNotice(r.user.id, r.token);
      });
    });

  group
    .command('list')
    .option('--format <format>', 'table or json', 'table')
    .description('every user, active and revoked (never a token)')
    .action(async (opts: { format: string }) => {
      if (!['table', 'json'].includes(opts.format))
        throw new UsageError(`--format must be table or json (got ${printable(opts.format, { oneLine: true })})`);
      await withRuntime(async (rt) => {
        const dir = await readDirectory(rt.store);
        actorFor(dir, token(), 'read');
        if (opts.format === 'json')
          process.stdout.write(`${JSON.stringify([...dir.users.values()].map(json), null, 2)}\n`);
        else process.stdout.write(`${table(dir)}\n`);
      });
    });

  group
    .command('rotate')
    .argument('<id>', 'the user whose token is replaced (yourself, or anyone as an admin)')
    .description('give a user a new token, printed once; the old one stops working at once')
    .action(async (id: string) => {
      await withRuntime(async (rt) => {
        const r = await rotateToken(rt.store, token(), id);
        tokenNotice(id, r.token);
      });
    });

  group
    .command('revoke')
    .argument('<id>', 'the user to revoke for good')
    .requiredOption('--reason <text>', 'why, kept in the users history')
    .description('revoke a user: their token stops working at once; the last admin cannot be revoked')
    .action(async (id: string, opts: { reason: string }) => {
      await withRuntime(async (rt) => {
        await revokeUser(rt.store, token(), id, opts.reason);
        process.stdout.write(`revoked ${id}\n`);
      });
    });
}
