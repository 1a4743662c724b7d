import { spawn } from 'node:child_process';
import path from 'node:path';
import { CommanderError, type Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main';

/**
 * `recon --help` and `recon <command> --help` for every command the program registers (the commands
 * are loaded from src/cli/commands, so a command added later is covered without touching this file).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

function recon(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Help text is wrapped to the terminal width: compare with whitespace collapsed. */
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

interface Listed {
  readonly path: string[];
  readonly command: Command;
}

function visible(cmd: Command): Command[] {
  return cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
}

function listCommands(cmd: Command, prefix: string[] = []): Listed[] {
  return visible(cmd).flatMap((c) => [
    { path: [...prefix, c.name()], command: c },
    ...listCommands(c, [...prefix, c.name()]),
  ]);
}

/**
 * `recon <path...> --help` through the same program the bin runs, in this process (a node process per
 * command would take seconds each): commander prints the help and stops with exit code 0.
 */
async function helpOf(args: string[], argv: string[] = []): Promise<{ code: number; stdout: string }> {
  const program = await buildProgram(argv);
  let stdout = '';
  const capture = (c: Command) => {
    c.exitOverride().configureOutput({ writeOut: (t) => (stdout += t), writeErr: (t) => (stdout += t) });
    c.commands.forEach(capture);
  };
  capture(program);
  try {
    await program.parseAsync(['node', 'recon', ...args, '--help']);
    return { code: 0, stdout };
  } catch (e) {
    if (e instanceof CommanderError) return { code: e.exitCode, stdout };
    throw e;
  }
}

describe('recon --help', () => {
  let program: Command;
  let commands: Listed[];
  let helps: Map<string, { code: number; stdout: string }>;

  beforeAll(async () => {
    program = await buildProgram();
    commands = listCommands(program);
    helps = new Map();
    for (const c of commands) helps.set(c.path.join(' '), await helpOf(c.path));
  });

  it('registers the foundation commands', () => {
    const names = commands.map((c) => c.path.join(' '));
    expect(names).toContain('config');
    expect(names).toContain('migrate');
  });

  it('recon <command> --help works through the real entry point', async () => {
    const r = await recon(['migrate', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: recon migrate \[options\]/);
    expect(flat(r.stdout)).toContain('apply pending database migrations');
  });

  it('describes recon and lists every command with its description', async () => {
    const r = await recon(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: recon \[options\] \[command\]/);
    const text = flat(r.stdout);
    expect(text).toContain(flat(program.description()));
    for (const c of visible(program)) {
      expect(text, c.name()).toContain(c.name());
      // The list shows a command's summary when it has one, else its description.
      expect(text, c.name()).toContain(flat(c.summary() || c.description()).slice(0, 30));
    }
  });

  it('describes every command and each of its options and arguments', () => {
    for (const { path: p, command } of commands) {
      const name = p.join(' ');
      const r = helps.get(name)!;
      expect(r.code, `${name}: ${r.stdout}`).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: recon ${name} `));
      const text = flat(r.stdout);
      expect(command.description().trim().length, `${name} has a description`).toBeGreaterThan(10);
      expect(text, name).toContain(flat(command.description()));
      for (const o of command.options.filter((o) => !o.hidden)) {
        expect(o.description.trim().length, `${name} ${o.flags} has a description`).toBeGreaterThan(3);
        expect(text, `${name} ${o.flags}`).toContain(o.flags);
        expect(text, `${name} ${o.flags}`).toContain(flat(o.description));
      }
      for (const a of command.registeredArguments) expect(text, `${name} <${a.name()}>`).toContain(a.name());
    }
  });
});

describe('a command loads only its own file', () => {
  it("builds `recon X …` from X's file alone, with the same help as the whole program gives for X and its subcommands", async () => {
    const whole = listCommands(await buildProgram());
    const tops = (await buildProgram()).commands.map((c) => c.name());
    expect(tops.length).toBeGreaterThan(20);
    for (const top of tops) {
      const argv = ['node', 'recon', top];
      const alone = await buildProgram(argv);
      expect(alone.commands.map((c) => c.name())).toEqual([top]);
      for (const c of whole.filter((w) => w.path[0] === top))
        expect(await helpOf(c.path, argv), c.path.join(' ')).toEqual(await helpOf(c.path));
    }
  }, 300_000);

  it('loads every command for help, an unknown or misspelt command, and an option first', async () => {
    const all = (await buildProgram()).commands.length;
    for (const first of ['--help', 'help', 'statments', 'Statements', '--version'])
      expect((await buildProgram(['node', 'recon', first])).commands.length, first).toBe(all);
  });
});
