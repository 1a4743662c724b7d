import type { Sql } from '../../db/connect';
import { adjustmentEntries, reserveSchedule, statementFigures, statementLines } from '../../ledger/ledger-queries';
import type { Position } from '../../store/types';
import type { AdjustmentLine, ReserveScheduleRow, StatementFigures, StatementLine } from './workbooks';

/** The ledger queries a statement needs (src/ledger/ledger-queries.ts); injectable for tests. */
export interface StatementQueries {
  figures(opts: {
    month: string;
    timezone: string;
    subMerchantId?: string;
    atPosition: Position;
  }): Promise<readonly StatementFigures[]>;
  lines(opts: {
    month: string;
    timezone: string;
    subMerchantId: string;
    currency: string;
    atPosition: Position;
  }): AsyncIterable<StatementLine>;
  reserve(opts: {
    month: string;
    timezone: string;
    subMerchantId: string;
    atPosition: Position;
  }): Promise<readonly ReserveScheduleRow[]>;
  /** the entries behind the adjustments of a statement that builds on `previous` */
  adjustments?(opts: {
    month: string;
    timezone: string;
    subMerchantId: string;
    currency: string;
    atPosition: Position;
    previous: { month: string; atPosition: Position; timezone?: string };
  }): AsyncIterable<AdjustmentLine>;
}

export function ledgerStatementQueries(sql: Sql): StatementQueries {
  return {
    figures: (o) => statementFigures(sql, o),
    lines: (o) => statementLines(sql, o),
    reserve: (o) => reserveSchedule(sql, o),
    adjustments: (o) => adjustmentEntries(sql, o),
  };
}
