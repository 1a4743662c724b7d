import { type ErrorKind, ReconError } from '../errors';

/** The errors of the exports (statements, reports, workbooks), each with a code the CLI shows. */

export type ExportErrorCode =
  | 'EXPORT_AMOUNT_TOO_LARGE'
  | 'EXPORT_WRITE_FAILED'
  | 'EXPORT_NO_POSITION'
  | 'EXPORT_BRIDGE_MISMATCH'
  | 'EXPORT_NOTHING_TO_ISSUE'
  | 'EXPORT_FILE_NAME_COLLISION';

/**
 * An amount too large for a workbook cell, a journal not built yet and two receivers whose file names
 * collide are about the data; a bridge that does not tie is recon's own defect (it is built from the figures
 * it ties); a file that cannot be written is the file system's.
 */
const EXPORT_ERROR_KIND: Record<ExportErrorCode, ErrorKind> = {
  EXPORT_AMOUNT_TOO_LARGE: 'data',
  EXPORT_WRITE_FAILED: 'unavailable',
  EXPORT_NO_POSITION: 'data',
  EXPORT_BRIDGE_MISMATCH: 'internal',
  EXPORT_NOTHING_TO_ISSUE: 'data',
  EXPORT_FILE_NAME_COLLISION: 'data',
};

export class ExportError extends ReconError {
  readonly kind: ErrorKind;
  constructor(
    readonly code: ExportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExportError';
    this.kind = EXPORT_ERROR_KIND[code];
  }
}
