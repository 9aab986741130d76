// SHOW WATERMARKS and the REST view of a table's watermark: each watermarked table or source, its
// time column and expression, the watermark now (in the column's type) and the late rows it dropped.
import { formatMicros, formatMicrosLocal } from '../common/time/instant-micros.ts';
import type { TableDef } from '../planner/catalog.ts';
import type { StatementResult } from './api.ts';
import type { TableStore } from './table-store.ts';

/** A table's watermark as reads show it. */
export interface WatermarkInfo {
  readonly column: string;
  /** The expression as written, e.g. "ts - INTERVAL '5' SECOND". */
  readonly expression: string;
  /** The watermark as a value of the column's time type (timestamp for a date column); null before any row. */
  readonly watermark: string | null;
  /** Inserted rows dropped because their time was below the watermark. */
  readonly lateRows: number;
}

export function watermarkInfo(def: TableDef, store: TableStore): WatermarkInfo | null {
  const w = store.watermark;
  if (def.watermark === undefined || w === null) return null;
  const column = def.columns[def.watermark.column];
  const mark = w.value;
  let text: string | null = null;
  if (mark !== null)
    text = column?.type.kind === 'timestamptz' ? formatMicros(mark) : formatMicrosLocal(mark);
  return { column: column?.name ?? '', expression: def.watermark.sql, watermark: text, lateRows: w.lateRows };
}

/** SHOW WATERMARKS: one row per table or source with a watermark, in creation order. */
export function showWatermarks(
  relations: readonly TableDef[],
  tables: ReadonlyMap<string, TableStore>,
): StatementResult {
  const rows = relations.flatMap((def) => {
    const store = tables.get(def.name);
    const info = store === undefined ? null : watermarkInfo(def, store);
    return info === null
      ? []
      : [
          {
            name: def.name,
            column: info.column,
            expression: info.expression,
            watermark: info.watermark,
            late_rows: info.lateRows,
          },
        ];
  });
  return {
    statement: 'SHOW WATERMARKS',
    columns: [
      { name: 'name', type: 'text', nullable: false },
      { name: 'column', type: 'text', nullable: false },
      { name: 'expression', type: 'text', nullable: false },
      { name: 'watermark', type: 'text', nullable: true },
      { name: 'late_rows', type: 'bigint', nullable: false },
    ],
    rows,
  };
}
