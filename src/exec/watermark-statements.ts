// SHOW WATERMARKS and the REST view of a table's watermark: each watermarked table or source (its watermark,
// late rows dropped), then each EMIT ON WINDOW CLOSE view (its clause with its lateness, changes ignored).
import { formatMicros, formatMicrosLocal } from '../common/time/instant-micros.ts';
import { formatInterval, Interval } from '../common/time/interval.ts';
import type { Catalog, TableDef, ViewDef } from '../planner/catalog.ts';
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
  const text = watermarkText(def, w.value);
  return { column: column?.name ?? '', expression: def.watermark.sql, watermark: text, lateRows: w.lateRows };
}

/** A watermark (µs, or null before any row) as text of its column's type, as reads show it. */
export function watermarkText(def: TableDef, mark: number | null): string | null {
  if (mark === null || def.watermark === undefined) return null;
  const column = def.columns[def.watermark.column];
  return column?.type.kind === 'timestamptz' ? formatMicros(mark) : formatMicrosLocal(mark);
}

/**
 * The tables and sources with a WATERMARK a view reads, directly or through other views, in the
 * order first reached: the watermarks its changelog messages and reads carry.
 */
export function watermarkedInputs(catalog: Catalog, view: ViewDef): TableDef[] {
  const out: TableDef[] = [];
  const seen = new Set<string>();
  const visit = (names: readonly string[]): void => {
    for (const name of names) {
      if (seen.has(name)) continue;
      seen.add(name);
      const def = catalog.get(name);
      if (def?.kind === 'table' && def.watermark !== undefined) out.push(def);
      else if (def?.kind === 'view') visit(def.dependsOn);
    }
  };
  visit(view.dependsOn);
  return out;
}

/** An EMIT ON WINDOW CLOSE view as SHOW WATERMARKS lists it. */
export interface ClosingView {
  readonly name: string;
  /** The view's window end column, as the view names it (windowEndColumn). */
  readonly column: string;
  /** The watermark the view's windows are closed through (µs), null before the first close. */
  readonly closedThrough: number | null;
  readonly zoned: boolean;
  /** Changes to windows already closed (and rows with a NULL time), not applied. */
  readonly ignored: number;
  /** µs a window stays open after the watermark reaches its end (its late-change policy). */
  readonly allowedLateness: number;
}

/**
 * The name view `def` gives the window end it closes on, its aggregate's group key `keyIndex`: the
 * view's column that passes that key on (a select list may rename it, `window_end AS we`), or
 * `window_end` when the select list leaves it out.
 */
export function windowEndColumn(def: ViewDef, keyIndex: number): string {
  const plan = def.plan;
  let column = -1;
  if (plan.kind === 'aggregate') column = keyIndex;
  else if (plan.kind === 'project')
    column = plan.exprs.findIndex((e) => e.kind === 'col' && e.index === keyIndex);
  return def.columns[column]?.name ?? 'window_end';
}

/** An EOWC view's policy as SHOW WATERMARKS prints it in `expression`: its clause, lateness included. */
export function closingExpression(allowedLateness: number): string {
  return allowedLateness > 0
    ? `EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '${formatInterval(Interval.of(0, 0, allowedLateness))}'`
    : 'EMIT ON WINDOW CLOSE';
}

/** An EMIT ON WINDOW CLOSE view's policy and progress, as a view's catalog entry shows them. */
export interface WindowCloseInfo {
  /** How long a window stays open after the watermark reaches its end (an interval's text). */
  readonly allowedLateness: string;
  /** The watermark its windows are closed through (null before the first); the least of its closings. */
  readonly closedThrough: string | null;
  /** Changes to windows it had closed, which it did not apply. */
  readonly ignoredChanges: number;
}

/** The window-close entry of view `name`, or null when it does not EMIT ON WINDOW CLOSE. */
export function windowCloseInfo(closing: readonly ClosingView[], name: string): WindowCloseInfo | null {
  const own = closing.filter((v) => v.name === name);
  const first = own[0];
  if (first === undefined) return null;
  let through: number | null = null;
  let ignored = 0;
  for (const v of own) {
    ignored += v.ignored;
    if (v.closedThrough !== null && (through === null || v.closedThrough < through))
      through = v.closedThrough;
  }
  if (own.some((v) => v.closedThrough === null)) through = null;
  return {
    allowedLateness: formatInterval(Interval.of(0, 0, first.allowedLateness)),
    closedThrough: through === null ? null : first.zoned ? formatMicros(through) : formatMicrosLocal(through),
    ignoredChanges: ignored,
  };
}

/**
 * SHOW WATERMARKS: one row per table or source with a watermark, in creation order, then one per
 * EMIT ON WINDOW CLOSE view: the watermark its windows are closed through and, as its late rows,
 * the changes to closed windows it did not apply (docs/sql.md "Watermarks").
 */
export function showWatermarks(
  relations: readonly TableDef[],
  tables: ReadonlyMap<string, TableStore>,
  closing: readonly ClosingView[] = [],
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
  for (const v of closing) {
    const mark = v.closedThrough;
    rows.push({
      name: v.name,
      column: v.column,
      expression: closingExpression(v.allowedLateness),
      watermark: mark === null ? null : v.zoned ? formatMicros(mark) : formatMicrosLocal(mark),
      late_rows: v.ignored,
    });
  }
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
