// EMIT ON WINDOW CLOSE: finds which GROUP BY key of a view is the window_end of TUMBLE or HOP over a
// table's watermark column, so the runtime can hold each window until the watermark passes its end.
// The window_end may reach the view through views that pass it unchanged (projections, filters);
// anything else (joins, aggregates in between, SESSION, a window_end computed some other way) is
// refused here.
import { notSupported, SluiceError } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { fixedDelayMicros } from '../common/time/fixed-delay.ts';
import { parseInterval } from '../common/time/interval.ts';
import type { AllowedLatenessClause, Pos } from '../parser/ast.ts';
import type { Catalog } from './catalog.ts';
import type { LogicalPlan } from './logical-plan.ts';

/** What the view closes on: `table`'s watermark against group key number `keyIndex` (a window_end). */
export interface WindowCloseSpec {
  readonly table: string;
  readonly keyIndex: number;
  /** µs a window stays open past the watermark reaching its end (absent: 0, closed at once). */
  readonly allowedLateness?: number;
}

const HINT =
  'group by window_end of TUMBLE(t, ts, ...) or HOP(t, ts, ...) where t is a table declaring WATERMARK FOR ts';

export function bindWindowClose(
  plan: LogicalPlan,
  catalog: Catalog,
  pos: Pos,
  lateness?: AllowedLatenessClause,
): WindowCloseSpec {
  const micros = lateness === undefined ? 0 : allowedLateness(lateness);
  const spec = bindCloseKey(plan, catalog, pos);
  // 0 is left out, so a view without the option keeps its plan (and checkpoint) fingerprint.
  return micros > 0 ? { ...spec, allowedLateness: micros } : spec;
}

/** `ALLOWED LATENESS INTERVAL '…'`: a constant interval of days and time, in µs, not negative. */
function allowedLateness(clause: AllowedLatenessClause): number {
  const value = parseInterval(clause.text, clause.unit);
  if (value === null) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `invalid allowed lateness: "${clause.text.slice(0, 40)}" is not an interval`,
      { position: clause.pos, hint: "write ALLOWED LATENESS INTERVAL '10' SECOND" },
    );
  }
  return fixedDelayMicros(value, 'an allowed lateness', clause.pos);
}

function bindCloseKey(plan: LogicalPlan, catalog: Catalog, pos: Pos): WindowCloseSpec {
  const agg = plan.kind === 'project' ? plan.input : plan;
  if (agg.kind !== 'aggregate') {
    throw notSupported('EMIT ON WINDOW CLOSE without GROUP BY window_end', pos, HINT);
  }
  let viewRead: string | null = null;
  for (let k = 0; k < agg.groupKeys.length; k++) {
    const key = agg.groupKeys[k] as ScalarExpr;
    if (key.kind !== 'col') continue;
    const entered: string[] = [];
    const found = windowEndSource(agg.input, key.index, catalog, entered);
    if (found === null) {
      viewRead ??= entered[0] ?? null;
      continue;
    }
    if (found.scan.sourceKind === 'view') {
      viewRead = found.scan.source;
      continue;
    }
    const table = catalog.get(found.scan.source);
    const watermark = table?.kind === 'table' ? table.watermark : undefined;
    if (watermark !== undefined && watermark.column === found.timeColumn) {
      return { table: found.scan.source, keyIndex: k };
    }
  }
  if (readsJoin(agg.input)) {
    throw notSupported('EMIT ON WINDOW CLOSE over a join', pos, HINT);
  }
  if (viewRead !== null) {
    throw notSupported(`EMIT ON WINDOW CLOSE over view "${viewRead}"`, pos, HINT);
  }
  throw notSupported(
    "EMIT ON WINDOW CLOSE without a GROUP BY window_end over a table's watermark column",
    pos,
    HINT,
  );
}

type Scan = Extract<LogicalPlan, { kind: 'scan' }>;

/**
 * Follows column `index` of `p` down through filters and column projections to the TUMBLE or HOP
 * that computes it as window_end; returns the scanned relation and its time column, or null. A scan
 * of a view is followed into the view's own plan (its output columns are the view's, in order), so
 * a window_end computed in a view and passed on unchanged keeps its lineage; `entered` collects the
 * views walked into, outermost first, for the refusal's message.
 */
function windowEndSource(
  p: LogicalPlan,
  index: number,
  catalog: Catalog,
  entered: string[],
): { scan: Scan; timeColumn: number } | null {
  for (;;) {
    if (p.kind === 'filter') {
      p = p.input;
      continue;
    }
    if (p.kind === 'scan') {
      // A view's rows are its plan's rows as they change, so its column has the plan's lineage.
      const def = p.sourceKind === 'view' ? catalog.get(p.source) : undefined;
      if (def?.kind !== 'view') return null;
      entered.push(def.name);
      p = def.plan;
      continue;
    }
    if (p.kind === 'project') {
      const e = p.exprs[index];
      if (e === undefined) return null;
      if (e.kind === 'col') {
        index = e.index;
        p = p.input;
        continue;
      }
      // TUMBLE's window_end: time_add(tumble_start(ts, size, offset), size) (bind-window-tvf.ts).
      const start = e.kind === 'call' && e.fn === 'time_add' ? e.args[0] : undefined;
      const time = start?.kind === 'call' && start.fn === 'tumble_start' ? start.args[0] : undefined;
      if (time?.kind !== 'col' || p.input.kind !== 'scan') return null;
      return { scan: p.input, timeColumn: time.index };
    }
    if (p.kind === 'expand' && p.generator.kind === 'hop') {
      // HOP appends window_start, window_end: the last column.
      const time = p.generator.time;
      if (index !== p.columns.length - 1 || time.kind !== 'col' || p.input.kind !== 'scan') return null;
      return { scan: p.input, timeColumn: time.index };
    }
    return null;
  }
}

/** Whether a join feeds `p` through row-wise nodes (the window-close check then names it). */
function readsJoin(p: LogicalPlan): boolean {
  for (;;) {
    if (p.kind === 'join' || p.kind === 'semiJoin') return true;
    if (p.kind === 'filter' || p.kind === 'project' || p.kind === 'expand') p = p.input;
    else return false;
  }
}
