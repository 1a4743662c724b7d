/** The errors of the exports (statements, reports, workbooks), each with a code the CLI shows. */

export type ExportErrorCode =
  | 'EXPORT_AMOUNT_TOO_LARGE'
  | 'EXPORT_WRITE_FAILED'
  | 'EXPORT_NO_POSITION'
  | 'EXPORT_BRIDGE_MISMATCH'
  | 'EXPORT_NOTHING_TO_ISSUE'
  | 'EXPORT_FILE_NAME_COLLISION';

export class ExportError extends Error {
  constructor(
    readonly code: ExportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExportError';
  }
}
