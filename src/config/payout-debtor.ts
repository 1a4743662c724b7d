/** The variables naming who pays the payout runs' transfers (src/payout-runs/debtor.ts reads them), for `recon config`. */
export const DEBTOR_VARIABLES = [
  {
    name: 'RECON_PAYOUTS_DEBTOR_NAME',
    default: '(unset: RECON_ISSUER_NAME)',
    example: 'Marketplace LLC',
    meaning: 'the holder of the payouts accounts, as the payment file (pain.001) names the debtor',
  },
  {
    name: 'RECON_PAYOUTS_DEBTOR_BIC',
    default: '(unset: NOTPROVIDED in the file)',
    example: 'COBADEFFXXX',
    meaning: "the BIC of the payouts accounts' bank, in the payment file",
  },
] as const;
