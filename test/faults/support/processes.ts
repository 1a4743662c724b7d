import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * recon as a real child process (`node bin/recon.mjs …`), with its output captured, bounded waits, and a
 * registry so that a test file can kill every child it started in afterAll (`killAll`).
 */

export const ROOT = path.resolve(__dirname, '../../..');
export const BIN = path.join(ROOT, 'bin/recon.mjs');

export interface ReconProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout so far */
  stdout(): string;
  /** stderr so far */
  stderr(): string;
  /** resolves when the process has exited (code, or the signal that ended it) */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** resolves when `pattern` appears in stdout+stderr; rejects after `timeoutMs` or if the process exits first */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal: NodeJS.Signals): void;
}

const running = new Set<ReconProcess>();

export function spawnRecon(args: readonly string[], env: NodeJS.ProcessEnv): ReconProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    listeners.forEach((l) => {
      l();
    });
  });
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
    listeners.forEach((l) => {
      l();
    });
  });
  let hasExited = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      hasExited = true;
      running.delete(proc);
      listeners.forEach((l) => {
        l();
      });
      resolve({ code, signal });
    });
  });
  const proc: ReconProcess = {
    child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForOutput(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out + '\n' + err);
          if (m) return finish(() => resolve(m[0]));
          if (hasExited)
            finish(() => reject(new Error(`recon ${args[0]} exited before printing ${pattern}:\n${tail(out, err)}`)));
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(
                new Error(
                  `timed out after ${timeoutMs} ms waiting for ${pattern} from recon ${args[0]}:\n${tail(out, err)}`,
                ),
              ),
            ),
          timeoutMs,
        );
        const finish = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      });
    },
    kill(signal) {
      if (!hasExited) child.kill(signal);
    },
  };
  running.add(proc);
  return proc;
}

function tail(out: string, err: string): string {
  return `--- stdout (end) ---\n${out.slice(-2000)}\n--- stderr (end) ---\n${err.slice(-3000)}`;
}

/** Runs recon to completion (bounded) and returns its exit code and output. */
export async function runRecon(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnRecon(args, env);
  const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
  const { code, signal } = await p.exited;
  clearTimeout(timer);
  if (signal === 'SIGKILL')
    throw new Error(`recon ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${tail(p.stdout(), p.stderr())}`);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

/** Kills (SIGKILL) every recon child still running and waits for them to go. */
export async function killAll(): Promise<void> {
  const left = [...running];
  for (const p of left) p.kill('SIGKILL');
  await Promise.all(left.map((p) => p.exited));
}

/** Polls `probe` until it returns a value other than undefined/false, at most `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
  }
}
