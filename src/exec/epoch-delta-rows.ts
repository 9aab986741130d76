// The rows of a node's delta in one write's epoch as the view's stages pass them, known before the
// epoch runs (view-join-fanout.ts walks them down a view's plan): a count or known rows through a
// Map's filter and projection, a FlatMap's expansion, a union, a GROUP BY (a retraction and an
// insertion per group the write touches) and a DISTINCT. A row standing for a group's old row is
// marked, and the mark follows it through projections and expansions.
import type { SqlType, Value } from '../common/types.ts';
import { encodeExactValues, encodeValues } from '../common/values.ts';
import { compareExactRows, identicalRows } from '../ivm/exact-rows.ts';
import { groupIdOf } from '../ivm/ops/reduce-groups.ts';
import { type RowFn, type ScalarExpr, columnsOf, compileScalar } from '../common/scalar-expr.ts';
import {
  type ExpandFn,
  type ExpandGenerator,
  compileExpand,
  expandReads,
  expandTypes,
} from '../common/expand.ts';
import type { DataflowNode } from '../ivm/dataflow-plan.ts';
import {
  carryInsertion,
  distinctCopy,
  groupRows,
  groupTakes,
  isPaired,
  markSign,
  markingInsertions,
  signOf,
} from './epoch-insertions.ts';

/** Rows with only some of their columns known (`known` null: all of them). */
export interface KnownRows {
  readonly rows: readonly (readonly Value[])[];
  readonly known: readonly boolean[] | null;
}

/** A node's delta in the epoch: at most a count of rows (0: none), or known rows. */
export type EpochDelta = number | KnownRows;

/** A delta no bound can be put on before the epoch runs (joins after it are not counted). */
export const UNBOUNDED = -1;

/**
 * Most rows a join's output is listed with for a join after it (more than this, and that join is
 * bounded by the count alone: the most rows the other side holds under one key per row).
 */
export const LISTED_JOIN_ROWS = 100_000;

export function rowCount(delta: EpochDelta): number {
  return typeof delta === 'number' ? delta : delta.rows.length;
}

/** Whether every column `e` reads is known. */
export function covered(e: ScalarExpr, known: readonly boolean[] | null): boolean {
  if (known === null) return true;
  for (const c of columnsOf(e)) if (known[c] !== true) return false;
  return true;
}

/**
 * Rows of a Reduce's bound that stand for a group's old row: retracted only if the group exists.
 * A join side that holds no row under such a row's key tells that it does not (its arrangement holds
 * the side's rows). The mark follows the row through projections and expansions (a retraction stays
 * one); a joined row loses it and is counted.
 */
const retractedIfHeld = new WeakSet<readonly Value[]>();

/** Whether `row` stands for a group's old row, retracted only if the group exists. */
export function retractedOnlyIfHeld(row: readonly Value[]): boolean {
  return retractedIfHeld.has(row);
}

/**
 * `out`, made from `row`, carries its marks (a group's old row, an insertion, and where `keepPair`
 * the pairing of a group's old and new rows: epoch-insertions.ts).
 */
function carryMarks(row: readonly Value[], out: readonly Value[], keepPair: boolean): void {
  if (retractedIfHeld.has(row)) retractedIfHeld.add(out);
  carryInsertion(row, out, keepPair);
}

const compiled = new WeakMap<ScalarExpr, RowFn>();
function compiledOf(e: ScalarExpr): RowFn {
  let fn = compiled.get(e);
  if (fn === undefined) compiled.set(e, (fn = compileScalar(e)));
  return fn;
}

/**
 * Known rows through a filter and a projection: a filter over known columns drops what it drops (a
 * row it fails on too, as the Map drops it); over an unknown one it keeps the row (a bound). A
 * projected column is known when every column it reads is.
 */
export function throughMap(
  delta: KnownRows,
  filter: ScalarExpr | null,
  project: readonly ScalarExpr[] | null,
): KnownRows {
  const known = delta.known;
  const test = filter !== null && covered(filter, known) ? compiledOf(filter) : null;
  const columns = project?.map((e) => (covered(e, known) ? compiledOf(e) : null)) ?? null;
  // A filter over an unknown column (a HAVING on an aggregate) may drop a group's new row and keep
  // its old one: the pair is not kept (the rows are copied without it).
  const keepPair = filter === null || test !== null;
  if (test === null && columns === null && (keepPair || !delta.rows.some(isPaired))) return delta;
  const rows: (readonly Value[])[] = [];
  for (const row of delta.rows) {
    try {
      if (test !== null && test(row) !== true) continue;
      if (columns === null && (keepPair || !isPaired(row))) {
        rows.push(row);
        continue;
      }
      const out = columns === null ? [...row] : columns.map((f) => (f === null ? null : f(row)));
      // A group's old row projected is still retracted only if its group exists.
      carryMarks(row, out, keepPair);
      rows.push(out);
    } catch {
      continue;
    }
  }
  const outKnown =
    columns === null ? known : columns.every((f) => f !== null) ? null : columns.map((f) => f !== null);
  return { rows, known: outKnown };
}

const expanders = new WeakMap<ExpandGenerator, ExpandFn>();

/**
 * Known rows through a FlatMap (HOP's windows, unnest, VALUES): each row with every tuple its
 * generator yields, as the FlatMap emits them, so a GROUP BY window_start after it knows its groups.
 * Null when the generator reads a column that is not known, or past LISTED_JOIN_ROWS rows (the
 * caller then bounds it by its count). A row the generator fails on is dropped, as the FlatMap does.
 */
export function throughExpand(delta: KnownRows, generator: ExpandGenerator): KnownRows | null {
  if (!expandReads(generator).every((e) => covered(e, delta.known))) return null;
  let expand = expanders.get(generator);
  if (expand === undefined) expanders.set(generator, (expand = compileExpand(generator)));
  const rows: (readonly Value[])[] = [];
  for (const row of delta.rows) {
    let tuples: Value[][];
    try {
      tuples = expand(row);
    } catch {
      continue;
    }
    if (rows.length + tuples.length > LISTED_JOIN_ROWS) return null;
    for (const tuple of tuples) {
      const out = [...row, ...tuple];
      // The pair's expanded rows differ (a window each): not paired.
      carryMarks(row, out, false);
      rows.push(out);
    }
  }
  const known = delta.known;
  if (known === null) return { rows, known: null };
  return { rows, known: [...known, ...expandTypes(generator).map(() => true)] };
}

/** The deltas of the inputs taken together (a union's, or a set operation's: rows of its inputs). */
export function together(inputs: readonly EpochDelta[]): EpochDelta {
  let count = 0;
  let listed = true;
  for (const d of inputs) {
    if (d === UNBOUNDED) return UNBOUNDED;
    count += rowCount(d);
    if (typeof d === 'number' && d > 0) listed = false;
  }
  if (!listed || count === 0) return count;
  const rows: (readonly Value[])[] = [];
  let known: boolean[] | null = null;
  for (const d of inputs) {
    if (typeof d === 'number') continue;
    for (const row of d.rows) rows.push(row);
    if (d.known !== null) {
      const mask = d.known;
      known = known === null ? [...mask] : known.map((k, i) => k && mask[i] === true);
    }
  }
  return { rows, known };
}

/**
 * An EXCEPT's right input as its output sees it: a row inserted there may retract the row from the
 * output, and a group's old row retracted there may put it back, so the rows go on as copies with
 * no mark (an insertion, a retraction only if held, a pair).
 */
export function signsLost(delta: EpochDelta): EpochDelta {
  if (typeof delta === 'number') return delta;
  return { rows: delta.rows.map((row) => [...row]), known: delta.known };
}

/** What reduceDelta reads of a Reduce's groups, before the epoch (ReduceGroups.rowsOfGroup). */
export interface GroupSizes {
  /** The input rows the group of these key values holds (0: no such group). */
  rowsOfGroup(key: readonly Value[]): number;
}

/**
 * A Reduce's delta: at most a retraction and an insertion per group the input touches. `sizes`:
 * the Reduce's groups, where this process holds them (null: with workers, or no Reduce), read to
 * tell a group that keeps some of its rows.
 */
export function reduceDelta(
  node: Extract<DataflowNode, { kind: 'reduce' }>,
  input: EpochDelta,
  sizes: GroupSizes | null,
): EpochDelta {
  if (node.emitOnClose !== undefined || node.closePanes !== undefined) return UNBOUNDED;
  const keyCount = node.keyCount;
  if (keyCount === 0) {
    // One group, whose old and new rows a join without a key meets whole (its values unknown).
    if (typeof input === 'number' || mayStayUnchanged(node)) return 2;
    const retraction = new Array<Value>(node.columns.length).fill(null);
    retractedIfHeld.add(retraction);
    return { rows: [retraction, [...retraction]], known: retraction.map(() => false) };
  }
  if (typeof input === 'number') return 2 * input;
  const keyed =
    node.fused === null ? input : throughMap(input, node.fused.filter, node.fused.project.slice(0, keyCount));
  for (let i = 0; i < keyCount; i++)
    if (keyed.known !== null && keyed.known[i] !== true) return 2 * rowCount(keyed);
  // One row per group, as the Reduce tells its groups apart (NULLs one group), its aggregates unknown.
  const groupOf = (row: readonly Value[]): Value =>
    groupIdOf(keyCount, keyCount === 1 ? row : row.slice(0, keyCount));
  const groups = new Map<Value, { retraction: Value[]; out: Value[]; rows: (readonly Value[])[] }>();
  // While signs are marked (a subquery's or a Top-N's count), each group's input rows, to pair its
  // two rows when it stays.
  const marking = markingInsertions();
  const rows: (readonly Value[])[] = [];
  const width = node.columns.length;
  for (const row of keyed.rows) {
    const id = groupOf(row);
    const group = groups.get(id);
    if (group !== undefined) {
      if (marking) group.rows.push(row);
      continue;
    }
    const out = new Array<Value>(width).fill(null);
    for (let i = 0; i < keyCount; i++) out[i] = row[i] ?? null;
    // The group's old row, retracted only if the group exists: a join holding no row under its key
    // drops it (see `present`).
    const retraction = [...out];
    retractedIfHeld.add(retraction);
    groups.set(id, { retraction, out, rows: [row] });
    rows.push(retraction, out);
  }
  // Its new row is an insertion, its old one a deletion. A group stays when the write only inserts
  // into it, or when every row it may lose is a known deletion of one of its rows and it holds more:
  // its two rows are then paired.
  // A group that loses every row it holds and gains others stays too, where its insertions surely
  // reach it (the fused filter read known columns: `keyed` holds only the rows it passes).
  if (marking) {
    const insertionsReach = node.fused?.filter == null || covered(node.fused.filter, input.known);
    for (const { retraction, out, rows: inputs } of groups.values()) {
      const takes = groupTakes(inputs);
      const gained = takes === null || !insertionsReach ? 0 : takes.inserted;
      const stays =
        takes !== null &&
        (takes.taken === 0 ||
          (takes.known && sizes !== null && sizes.rowsOfGroup(out) + gained > takes.taken));
      groupRows(retraction, out, stays);
    }
  }
  // Its groups may come out unchanged (a MAX a row does not pass): known only as a bound (joinDelta).
  if (mayStayUnchanged(node)) return rows.length;
  return { rows, known: Array.from({ length: width }, (_, i) => i < keyCount) };
}

/** Aggregates a row can enter a group without changing: MIN, MAX, bool_and, bool_or, DISTINCT. */
const STEADY_AGGREGATES: ReadonlySet<string> = new Set(['min', 'max', 'bool_and', 'bool_or']);

/**
 * Whether a group the write touches may keep its row (no retraction, no insertion) because every
 * aggregate of it may keep its value: q5's maximum per window, where a bid that is not the new
 * maximum changes nothing past the Reduce, and a count of its groups would charge the whole window.
 */
function mayStayUnchanged(node: Extract<DataflowNode, { kind: 'reduce' }>): boolean {
  const aggregates = node.aggregates;
  return aggregates.length > 0 && aggregates.every((a) => a.distinct || STEADY_AGGREGATES.has(a.fn));
}

/** What distinctRows reads of a DISTINCT, before the epoch (DistinctOp.heldEqualTo). */
export interface DistinctHeld {
  /** The rows held SQL-equal to `row`, each text once, with its count. */
  heldEqualTo(row: readonly Value[]): readonly { readonly row: readonly Value[]; readonly count: number }[];
}

/** Types whose equal values may print otherwise (1.5 and 1.50, -0 and 0, char(n)'s padding). */
const TEXTS_VARY: ReadonlySet<string> = new Set([
  'float',
  'numeric',
  'interval',
  'jsonb',
  'array',
  'unknown',
]);

/** Whether SQL-equal rows of these columns always print alike: a DISTINCT's shown row then stays. */
export function printsAlike(columns: readonly { readonly type: SqlType }[]): boolean {
  return columns.every(
    (c) => !TEXTS_VARY.has(c.type.kind) && !(c.type.kind === 'text' && c.type.fixed === true),
  );
}

/** Whether a value may print otherwise while SQL-equal (1.5 and 1.50, -0 and 0): all but a few types. */
function mayPrintOtherwise(row: readonly Value[]): boolean {
  for (const v of row) if ((typeof v === 'object' && v !== null) || v === 0 || Number.isNaN(v)) return true;
  return false;
}

/**
 * A DISTINCT's delta: per distinct value (as the DISTINCT tells rows apart, NULLs alike) the row it
 * shows before the epoch retracted and the one it shows after inserted, where they differ. With its
 * held rows (`held`) and every copy's sign known, exactly that: a value held whose shown text stays
 * emits nothing, one whose shown text changes (1.50 held, 1.5 inserted: 1.5 shows) emits two rows.
 * Otherwise a value's copies make one row whose marks all of them agree on (distinctCopy: a group's
 * old and new rows of a GROUP BY without aggregates are one value, and the DISTINCT emits the one or
 * the other, not the retraction alone), and a second, unmarked, where another text of the value may
 * be shown before or after. Rows with a column not known are kept as they are (a bound).
 */
export function distinctRows(delta: KnownRows, held: DistinctHeld | null): KnownRows {
  if (delta.known !== null && !delta.known.every((k) => k)) return delta;
  const byValue = new Map<string, (readonly Value[])[]>();
  for (const row of delta.rows) {
    const value = encodeValues(row);
    const copies = byValue.get(value);
    if (copies === undefined) byValue.set(value, [row]);
    else copies.push(row);
  }
  const rows: (readonly Value[])[] = [];
  for (const copies of byValue.values()) {
    const first = copies[0] as readonly Value[];
    const shown = held?.heldEqualTo(first) ?? null;
    if (shown !== null && copies.every((r) => signOf(r) !== 0 && !retractedIfHeld.has(r))) {
      for (const row of shownChange(shown, copies)) rows.push(row);
      continue;
    }
    const { row, retractedIfHeld: marked } = distinctCopy(copies, retractedOnlyIfHeld);
    if (marked) retractedIfHeld.add(row);
    rows.push(row);
    const texts =
      shown === null
        ? mayPrintOtherwise(first)
        : [...copies, ...shown.map((h) => h.row)].some((r) => !identicalRows(r, first));
    if (texts) rows.push([...first]);
  }
  return { rows, known: delta.known };
}

/**
 * The rows a DISTINCT emits for one value whose held texts are `held` when `copies` (each a known
 * insertion or deletion of a held text) arrive: the text shown before retracted and the one shown
 * after inserted (the first by compareExactRows among those with a count), none when they are one.
 */
function shownChange(
  held: readonly { readonly row: readonly Value[]; readonly count: number }[],
  copies: readonly (readonly Value[])[],
): (readonly Value[])[] {
  const counts = new Map<string, { row: readonly Value[]; before: number; after: number }>();
  for (const h of held) counts.set(encodeExactValues(h.row), { row: h.row, before: h.count, after: h.count });
  for (const row of copies) {
    const text = encodeExactValues(row);
    let entry = counts.get(text);
    if (entry === undefined) counts.set(text, (entry = { row, before: 0, after: 0 }));
    entry.after += signOf(row);
  }
  let before: readonly Value[] | null = null;
  let after: readonly Value[] | null = null;
  for (const { row, before: b, after: a } of counts.values()) {
    if (b > 0 && (before === null || compareExactRows(row, before) < 0)) before = row;
    if (a > 0 && (after === null || compareExactRows(row, after) < 0)) after = row;
  }
  if (before !== null && after !== null && identicalRows(before, after)) return [];
  const out: (readonly Value[])[] = [];
  if (before !== null) {
    const retraction = [...before];
    markSign(retraction, -1);
    out.push(retraction);
  }
  if (after !== null) {
    const insertion = [...after];
    markSign(insertion, 1);
    out.push(insertion);
  }
  return out;
}
