import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { loadConfig, secretValues } from '../config/env';
import { consoleToStderr, scrubber } from '../log';
import { UsageError } from './runtime';

/** An error's text without the configured secrets (a driver may quote a connection string). */
function scrubbed(text: string): string {
  const c = loadConfig(process.env);
  return scrubber(c.ok ? secretValues(c.config) : [])(text);
}

/**
 * The `recon` command. Each file in ./commands registers one command (or a group), so adding a
 * command never touches this file.
 */
export interface CommandModule {
  register(program: Command): void;
}

const COMMANDS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'commands');

export async function buildProgram(): Promise<Command> {
  const program = new Command('recon')
    // One paragraph: commander wraps it to the terminal's width (hard line breaks made it ragged).
    .description(
      'recon: reconciles a split-payment marketplace against its payment service (PSP). ' +
        'Ingests register reports, period transactions and webhooks into an append-only event store, builds ' +
        'double-entry ledgers and discrepancy views, and writes payout statements and nightly reports. ' +
        'Configuration comes from environment variables: see README.md (Configuration).',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)');
  const files = readdirSync(COMMANDS_DIR)
    .filter((f) => /\.ts$/.test(f) && !f.endsWith('.test.ts'))
    .sort();
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(COMMANDS_DIR, f)).href)) as CommandModule;
    mod.register(program);
  }
  return program;
}

export async function main(argv: string[]): Promise<void> {
  consoleToStderr();
  const program = await buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode;
      return;
    }
    if (e instanceof UsageError) {
      process.stderr.write(`recon: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`recon: ${scrubbed((e as Error).message ?? String(e))}\n`);
    process.exitCode = 1;
  }
}
