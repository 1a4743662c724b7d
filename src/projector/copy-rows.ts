/**
 * The projections' bulk writer is the one bulk writer of recon (src/db/bulk-write.ts: COPY with its refusal
 * guard, and upserts through unnest), here under the name the projections know it by.
 */
export {
  type Cell,
  type Column,
  columnsOf,
  copyCell,
  copyRows,
  copyText,
  createTextBuffer,
  type TextBuffer,
  upsertRows,
} from '../db/bulk-write';
