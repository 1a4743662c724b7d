import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The console as a user first sees it: `recon demo --serve` in its own process on a fresh test database, the
 * demo's month (with its injected discrepancies, statements and bank) behind the console, and the tokens the
 * command prints for a fresh administrator and analyst.
 */
export interface DemoServer {
  readonly db: TestDatabase;
  readonly url: string;
  readonly outDir: string;
  readonly tokens: { readonly admin: string; readonly analyst: string };
  readonly output: () => string;
  stop(): Promise<void>;
}

export const DEMO_MONTH = '2026-10';

function waitForServing(child: ChildProcess, out: { text: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = () => {
      const m = /recon worker listening on (http:\/\/\S+) /.exec(out.text);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`recon demo --serve exited ${code}:\n${out.text.slice(-4000)}`)));
  });
}

export async function startDemoServer(
  opts: { payments?: number; config?: object; env?: Record<string, string> } = {},
): Promise<DemoServer> {
  const db = await createTestDatabase({ migrate: false });
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-console-'));
  const outDir = path.join(dir, 'out');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    RECON_DATA_DIR: dir,
    RECON_TIMEZONE: 'Europe/Kyiv',
    RECON_LOG_LEVEL: 'warn',
    ...opts.env,
  };
  if (opts.config) {
    env.RECON_CONFIG = path.join(dir, 'recon.json');
    writeFileSync(env.RECON_CONFIG, JSON.stringify(opts.config));
  }
  for (const k of Object.keys(env)) if (k.startsWith('PSP_') || k === 'RECON_TOKEN') delete env[k];
  const args = ['bin/recon.mjs', 'demo', '--payments', String(opts.payments ?? 40), '--month', DEMO_MONTH];
  const child = spawn(process.execPath, [...args, '--out', outDir, '--serve', '--port', '0'], {
    cwd: path.resolve(__dirname, '../..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { text: '' };
  child.stdout.on('data', (c: Buffer) => (out.text += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out.text += c.toString()));
  const url = await waitForServing(child, out);
  const token = (role: string) => {
    const m = new RegExp(`console ${role} \\S+ token: (recon_\\S+)`).exec(out.text);
    if (!m) throw new Error(`no ${role} token printed:\n${out.text.slice(-2000)}`);
    return m[1]!;
  };
  return {
    db,
    url,
    outDir,
    tokens: { admin: token('admin'), analyst: token('analyst') },
    output: () => out.text,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
