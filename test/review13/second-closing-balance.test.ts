import { describe, expect, it } from 'vitest';
import { camtText, mt940Text } from '../ingest/bank/support';

/**
 * A statement gives one closing balance. A second `:62F:` in one MT940 message, or a second `CLBD` in one camt.053
 * statement, replaced the first without a word: the statement footed against whichever came last, and a closing
 * balance of 999.00 that the entries did not reach was dropped. A second `:25:` or `:60F:` is already refused for
 * that reason ("the last no longer wins", docs/bank.md).
 */

const mt940 = [
  ':20:REF',
  ':25:DE89370400440532013000',
  ':28C:1/1',
  ':60F:C250101EUR100,00',
  ':61:2501150115C1,00NTRFNONREF//B1',
  ':62F:C250131EUR999,00',
  ':62F:C250131EUR101,00',
  '-',
  '',
].join('\n');

const balance = (type: string, amount: string) =>
  `<Bal><Tp><CdOrPrtry><Cd>${type}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2025-01-31</Dt></Dt></Bal>`;
const camt = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M1</MsgId><CreDtTm>2025-01-31T17:30:47+01:00</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
${balance('OPBD', '100.00')}
${balance('CLBD', '999.00')}
${balance('CLBD', '101.00')}
<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2025-01-15</Dt></BookgDt><AcctSvcrRef>B1</AcctSvcrRef></Ntry>
</Stmt></BkToCstmrStmt></Document>
`;

async function outcome(read: Promise<unknown>): Promise<string> {
  try {
    await read;
    return 'accepted';
  } catch (e) {
    return (e as Error).message;
  }
}

describe('a statement with two closing balances', () => {
  it('MT940: the second :62F: is refused naming its line', async () => {
    expect(await outcome(mt940Text(mt940))).toMatch(/^test\.sta: line 7: .*second closing balance/);
  });

  it('camt.053: the second CLBD is refused naming it', async () => {
    expect(await outcome(camtText(camt))).toMatch(/^test\.xml: line 7, .*Bal.*second closing balance/);
  });
});
