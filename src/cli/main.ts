import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { loadConfig, secretValues } from '../config/env';
import { consoleToStderr, scrubber } from '../log';
import { moduleUrl } from '../source-module';
import { isReconError } from '../errors';
import { asReconError, EXIT_CODE } from './errors';
import {
  EXIT_OUTPUT_FAILED,
  EXIT_READER_LEFT,
  outputFailure,
  outputMayBeCutShort,
  readerHasLeft,
  stdoutFlushed,
} from './stdout';

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

export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
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
  const load = async (f: string) =>
    ((await import(moduleUrl(pathToFileURL(path.join(COMMANDS_DIR, f)).href))) as CommandModule).register(program);
  // `recon X …` loads only X's file: a command does not load the libraries only others use (workbooks, PDF,
  // EventStoreDB), about half the CPU of a start; help, an unknown command or an option first load them all
  const own = argv[2] !== undefined && /^[a-z][a-z-]*$/.test(argv[2]) ? `${argv[2]}.ts` : null;
  if (own !== null && files.includes(own)) {
    await load(own);
    if (program.commands.some((c) => c.name() === argv[2])) return program;
  }
  for (const f of files) if (f !== own || program.commands.length === 0) await load(f);
  return program;
}

/** What the command line prints of an error: its message and code; a stack only for a defect of recon. */
export function reportError(e: unknown): number {
  const { error, kind } = asReconError(e);
  const clean = scrubbed(error.message);
  const [first, ...rest] = clean.split('\n');
  // A message that names recon already (the configuration's "recon cannot start: …") is not prefixed again.
  const prefix = first?.startsWith('recon ') ? '' : 'recon: ';
  // A first line that introduces a list ("3 bad records:") keeps its colon after the code.
  const head = first?.endsWith(':') ? `${first.slice(0, -1)} (${error.code}):` : `${first} (${error.code})`;
  process.stderr.write(`${prefix}${head}\n${rest.map((l) => `${l}\n`).join('')}`);
  if (kind === 'internal') {
    const stack = e instanceof Error ? e.stack : undefined;
    if (stack) process.stderr.write(`${scrubbed(stack)}\n`);
  }
  return EXIT_CODE[kind];
}

export async function main(argv: string[]): Promise<void> {
  consoleToStderr();
  outputMayBeCutShort();
  const program = await buildProgram(argv);
  // Every command, not only the root: a subcommand made before this call does not inherit it.
  const override = (c: Command): void => {
    c.exitOverride();
    // commander's refusals in recon's own form ("recon: … (USAGE)", README: Errors); its hint line as it is
    c.configureOutput({
      outputError: (text, write) => {
        if (!text.startsWith('error: ')) return write(text);
        // the code on the message's line; a suggestion ("(Did you mean --pos?)") on the lines after it
        const [first, ...rest] = text.slice('error: '.length).trimEnd().split('\n');
        write(`recon: ${first} (USAGE)\n${rest.map((l) => `${l}\n`).join('')}`);
      },
    });
    for (const sub of c.commands) override(sub);
  };
  override(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander has printed its message; help and --version end with 0, a refusal is a usage error
      process.exitCode = e.exitCode === 0 ? 0 : EXIT_CODE.usage;
      return;
    }
    // the stop a reader's leaving or a failed write asked for is said by the status below, not as an error
    if (!(stoppedByOutput() && isReconError(e, 'interrupted'))) process.exitCode = reportError(e);
  } finally {
    await endOfOutput();
  }
}

const stoppedByOutput = () => readerHasLeft() || outputFailure() !== null;

/**
 * Waits for stdout to reach its reader after a command that succeeded (a reader may leave after the last
 * write returned), then says how the output ended: a failed write as an error (74), a reader that left as a
 * filter does (141), unless the command had failed already.
 */
async function endOfOutput(): Promise<void> {
  // a command that failed or was stopped does not wait for a reader that may never read (a pager left open)
  if (!process.exitCode) await stdoutFlushed();
  const failure = outputFailure();
  if (failure) {
    process.stderr.write(`recon: could not write its output: ${failure.message} (OUTPUT_FAILED)\n`);
    process.exitCode = EXIT_OUTPUT_FAILED;
  } else if (readerHasLeft() && !process.exitCode) process.exitCode = EXIT_READER_LEFT;
}
