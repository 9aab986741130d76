// What one table write makes a view's joins build, known before its epoch runs (the engine refuses a
// write past `maxEpochJoinRows` with EPOCH_TOO_LARGE before the journal or any state changes). A
// join side fed by the written table through Map stages alone (filters, projections) gets exactly
// the written rows those stages keep; each meets the rows the other side holds: all of them for a
// join with no key, those under its key for an equi-join. A side fed otherwise (a Reduce, a view, a
// join before it) is not counted: its delta is known only once the epoch runs.
import type { Value } from '../common/types.ts';
import type { DataflowNode } from '../ivm/dataflow-plan.ts';
import { type RowFn, compileScalar } from '../common/scalar-expr.ts';
import type { JoinKey } from '../ivm/join-key.ts';
import type { JoinOp } from '../ivm/ops/join-op.ts';
import { type RowProjector, compileProjection } from '../ivm/ops/map-op.ts';

/** One Map stage between a table and a join side, as the MapOp runs it. */
interface MapStage {
  readonly filter: RowFn | null;
  readonly project: RowProjector | null;
}

/** The rows of a write, deletes then inserts (each builds as many join rows as the other). */
export interface WrittenRows {
  readonly deletes: readonly (readonly Value[])[];
  readonly inserts: readonly (readonly Value[])[];
}

/** One join of a view whose sides may be fed by a table through Map stages alone. */
export class JoinFanout {
  /** The table feeding each side through Map stages alone (null: something else feeds it). */
  private readonly fedBy: readonly [string | null, string | null];
  /** Each side's Map stages from its table, in order (compiled only for a keyed join). */
  private readonly stages: readonly [readonly MapStage[], readonly MapStage[]];
  private readonly keyed: boolean;

  constructor(
    private readonly op: JoinOp,
    node: Extract<DataflowNode, { kind: 'join' }>,
    byId: ReadonlyMap<number, DataflowNode>,
  ) {
    this.keyed = node.leftKey.length > 0;
    const left = plainTableOf(node.inputs[0] as number, byId);
    const right = plainTableOf(node.inputs[1] as number, byId);
    this.fedBy = [left?.table ?? null, right?.table ?? null];
    const compile = (maps: readonly MapNode[] | undefined): MapStage[] =>
      !this.keyed || maps === undefined
        ? []
        : maps.map((m) => ({
            filter: m.filter === null ? null : compileScalar(m.filter),
            project: m.project === null ? null : compileProjection(m.project),
          }));
    this.stages = [compile(left?.maps), compile(right?.maps)];
  }

  /** Whether a write to some table can be counted here (a side is a table's, through Maps alone). */
  get counted(): boolean {
    return this.fedBy[0] !== null || this.fedBy[1] !== null;
  }

  /**
   * A bound of `rowsBuilt` that reads no row: each of `rows` written rows meets at most the rows
   * the other side holds under one key (all of them without a key), twice for an outer join's
   * padding, plus one padded row; and each other written row when both sides read the table.
   */
  ceiling(table: string, rows: number): number {
    const leftFed = this.fedBy[0] === table;
    const rightFed = this.fedBy[1] === table;
    if (!leftFed && !rightFed) return 0;
    const per = this.keyed ? 2 : 1;
    let built = 0;
    if (leftFed) built += rows * (per * this.op.rowsUnderOneKey(1) + 1);
    if (rightFed) built += rows * (per * this.op.rowsUnderOneKey(0) + 1);
    if (leftFed && rightFed) built += rows * rows;
    return built;
  }

  /**
   * Rows this join builds at most in an epoch that writes `written` to `table`. No key: each
   * written row (before its side's filter) times the rows the other side holds. A key: each
   * written row its side's Maps keep probes the other side's arrangement under its key
   * (JoinOp.probeRows), so the count costs the write, not the state. A table on both sides (a
   * self-join) adds the pairs among the written rows: those of one key on each side.
   */
  rowsBuilt(table: string, written: WrittenRows): number {
    const leftFed = this.fedBy[0] === table;
    const rightFed = this.fedBy[1] === table;
    if (!leftFed && !rightFed) return 0;
    if (!this.keyed) {
      const count = written.deletes.length + written.inserts.length;
      const [leftRows, rightRows] = this.op.arrangedRows();
      return (
        (leftFed ? count * rightRows : 0) +
        (rightFed ? count * leftRows : 0) +
        (leftFed && rightFed ? count * count : 0)
      );
    }
    // One side (the usual case): no key kept, nothing allocated but the rows its Maps build.
    if (!rightFed) return this.probe(0, written, null);
    if (!leftFed) return this.probe(1, written, null);
    const leftKeys: (JoinKey | null)[] = [];
    const rightKeys: (JoinKey | null)[] = [];
    const built = this.probe(0, written, leftKeys) + this.probe(1, written, rightKeys);
    return built + pairsAmong(leftKeys, rightKeys);
  }

  /** JoinOp.probeRows of the written rows as side `side` sees them (deletes, then inserts). */
  private probe(side: 0 | 1, written: WrittenRows, keys: (JoinKey | null)[] | null): number {
    if (this.stages[side].length > 0) return this.op.probeRows(side, this.mapped(side, written), keys);
    return this.op.probeRows(side, written.deletes, keys) + this.op.probeRows(side, written.inserts, keys);
  }

  /** The written rows as side `side` sees them: through its Map stages (a row that fails is dropped). */
  private mapped(side: 0 | 1, written: WrittenRows): readonly (readonly Value[])[] {
    const stages = this.stages[side];
    const out: (readonly Value[])[] = [];
    for (const list of [written.deletes, written.inserts]) {
      next: for (let i = 0; i < list.length; i++) {
        let row = list[i] as readonly Value[];
        try {
          for (const stage of stages) {
            if (stage.filter !== null && stage.filter(row) !== true) continue next;
            if (stage.project !== null) row = stage.project(row);
          }
        } catch {
          continue;
        }
        out.push(row);
      }
    }
    return out;
  }
}

/** Pairs of rows, one from each list, with equal keys that are not NULL. */
function pairsAmong(left: readonly (JoinKey | null)[], right: readonly (JoinKey | null)[]): number {
  const counts = new Map<JoinKey, number>();
  for (const key of right) if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  let pairs = 0;
  for (const key of left) if (key !== null) pairs += counts.get(key) ?? 0;
  return pairs;
}

type MapNode = Extract<DataflowNode, { kind: 'map' }>;
type InputNode = Extract<DataflowNode, { kind: 'input' }>;

/**
 * The input whose rows reach node `id` through Map stages alone, with those stages from the input
 * on; null when something else feeds it. Shared with the first build's bound (backfill-bound.ts).
 */
export function mapChainOf(
  id: number,
  byId: ReadonlyMap<number, DataflowNode>,
): { readonly input: InputNode; readonly maps: readonly MapNode[] } | null {
  const maps: MapNode[] = [];
  let node = byId.get(id);
  while (node !== undefined && node.kind === 'map') {
    maps.push(node);
    node = byId.get(node.inputs[0] as number);
  }
  if (node === undefined || node.kind !== 'input') return null;
  return { input: node, maps: maps.reverse() };
}

/** The table whose rows reach node `id` through Map stages alone (not a view), with those stages. */
function plainTableOf(
  id: number,
  byId: ReadonlyMap<number, DataflowNode>,
): { readonly table: string; readonly maps: readonly MapNode[] } | null {
  const chain = mapChainOf(id, byId);
  if (chain === null || chain.input.sourceKind !== 'table') return null;
  return { table: chain.input.source, maps: chain.maps };
}
