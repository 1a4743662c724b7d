import type { Command } from 'commander';
import { migrate } from '../../db/migrate';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (every command also does this on start)')
    .action(async () => {
      await withRuntime(async (rt) => {
        // openRuntime already migrated; run again to report the state (a no-op when up to date).
        const applied = await migrate(rt.sql, rt.log);
        const [row] = await rt.sql<
          { n: number; latest: number | null }[]
        >`select count(*)::int as n, max(version) as latest from schema_migrations`;
        process.stdout.write(
          `migrations: ${row?.n ?? 0} applied, latest ${row?.latest ?? '-'}${applied.length ? '' : ', nothing pending'}\n`,
        );
      });
    });
}
