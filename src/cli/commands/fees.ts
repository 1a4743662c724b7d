import type { Command } from 'commander';
import { formatCsvIssue, importFeeContract, readFeeContract } from '../../ingest/fee-contract';
import { InputRefused, UsageError } from '../errors';
import { withRuntime } from '../runtime';

export function register(program: Command): void {
  const group = program
    .command('fees')
    .description('the fee contract: what the PSP may charge each sub-merchant per operation (docs/orders.md)');

  group
    .command('import')
    .argument('[file]', 'the contract CSV (default: RECON_FEE_CONTRACT)')
    .description(
      'validate the CSV and append a FeeScheduleLineSet event per new or changed line (every version is kept)',
    )
    .action(async (target: string | undefined) => {
      await withRuntime(async (rt) => {
        const file = target ?? rt.config.feeContractPath;
        if (!file) throw new UsageError('give the contract CSV, or set RECON_FEE_CONTRACT');
        const r = readFeeContract(file);
        if (!r.ok)
          throw new InputRefused(
            'FEE_CONTRACT_INVALID',
            `the fee contract has ${r.issues.length} problem${r.issues.length === 1 ? '' : 's'} (nothing imported):\n${r.issues.map((i) => `  ${formatCsvIssue(i)}`).join('\n')}`,
          );
        const res = await importFeeContract(rt.store, r.lines, { file });
        process.stdout.write(
          `fee contract: ${r.lines.length} lines in ${file}; ${res.set} new or changed, ${res.unchanged} unchanged\n`,
        );
      });
    });
}
