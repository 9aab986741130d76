// A Reduce's generated kernel: the per-row pass (filter, group key, aggregate arguments of the fused
// Map stage) and the fold of the rows into the batch's partials, each written out as one JavaScript
// function for this Reduce, in place of the interpreted passes (reduce-row-pass.ts) and their calls
// through shared closures and aggregate objects. Each view's kernel gets type feedback of its own.
// Only positions, finite numbers and operators are written into the code: every other value (string
// constants, closures, aggregate columns, maps) is passed in as a parameter; names never appear in it.
import type { Value } from '../../common/types.ts';
import type { ColumnSpec } from '../dataflow-plan.ts';
import type { RowErrorSink } from '../operator.ts';
import type { ScalarExpr } from '../../common/scalar-expr.ts';
import { columnsOf, compileScalarClosure } from '../../common/scalar-expr.ts';
import { ScalarCodegen } from '../../common/scalar-codegen.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import type { ZBatch } from '../zset.ts';
import { NO_SLOT } from '../group-index.ts';
import { inlinePartial, type AggColumn } from './aggregates.ts';
import type { StepRows } from './reduce-lookup.ts';
import type { FusedMap, RowPass } from './reduce-row-pass.ts';
import { generatedFunction } from '../../common/generated-function.ts';

type Evaluate = (input: ZBatch, rows: StepRows, rowArgs: Value[], errors: RowErrorSink) => void;
type Accumulate = (rows: StepRows, rowArgs: readonly Value[], pd: Float64Array) => void;

/** What a kernel is generated from: the fused Map stage and the Reduce's aggregate columns. */
export interface KernelSpec {
  readonly keyCount: number;
  readonly fused: FusedMap;
  /** Per aggregate, the position of its argument in `fused.project` (null: COUNT(*)). */
  readonly argColumns: readonly (number | null)[];
  readonly columns: readonly AggColumn[];
  /** Doubles per touch index in the partials (the partial count first). */
  readonly pstride: number;
}

export class GeneratedRowPass implements RowPass {
  readonly inputColumns: readonly ColumnSpec[];
  readonly hasArg: readonly boolean[];
  /** The generated code of the two functions (for tests and debugging). */
  readonly source: string;
  private readonly evaluateFn: Evaluate;
  private readonly accumulateFn: Accumulate;

  constructor(spec: KernelSpec) {
    this.inputColumns = spec.fused.inputColumns;
    this.hasArg = spec.argColumns.map((c) => c !== null);
    const rows = rowsSource(spec);
    const acc = accumulateSource(spec);
    this.source = `${rows.source}\n${acc.source}`;
    this.evaluateFn = build<Evaluate>(rows.source, rows.params, rows.args);
    this.accumulateFn = build<Accumulate>(acc.source, acc.params, acc.args);
  }

  evaluate(input: ZBatch, rows: StepRows, rowArgs: Value[], errors: RowErrorSink): void {
    this.evaluateFn(input, rows, rowArgs, errors);
  }

  accumulate(rows: StepRows, rowArgs: readonly Value[], pd: Float64Array): void {
    this.accumulateFn(rows, rowArgs, pd);
  }
}

interface Generated {
  readonly source: string;
  readonly params: readonly string[];
  readonly args: readonly unknown[];
}

function build<F>(source: string, params: readonly string[], args: readonly unknown[]): F {
  const factory = generatedFunction(...params, source) as (...a: unknown[]) => F;
  return factory(...args);
}

/**
 * The fused Map stage's code for one row: the input columns it reads (as locals `v<c>`), and the
 * filter, key and argument expressions over them. Values the code cannot hold (closures, strings)
 * are the codegen's parameters, with `inRow`, the scratch row the closures read.
 */
export interface RowCode {
  readonly cols: readonly number[];
  readonly filter: string | null;
  readonly keys: readonly string[];
  /** Per aggregate, its argument's expression (null: COUNT(*), which has none). */
  readonly args: readonly (string | null)[];
  /** The locals the expressions use: the columns' `v<c>` and the codegen's temporaries. */
  readonly locals: readonly string[];
  readonly params: readonly string[];
  readonly values: readonly unknown[];
}

export function rowCode(spec: Pick<KernelSpec, 'keyCount' | 'fused' | 'argColumns'>): RowCode {
  const { keyCount, fused, argColumns } = spec;
  const used = new Set<number>();
  if (fused.filter !== null) columnsOf(fused.filter, used);
  for (const e of fused.project) columnsOf(e, used);
  const cols = [...used].sort((x, y) => x - y);
  // Closures (the cases the generator does not inline) read a scratch row, filled when they run.
  const inRow = new Array<Value>(cols.length === 0 ? 0 : (cols[cols.length - 1] as number) + 1).fill(null);
  const fill = cols.map((c) => `inRow[${c}] = v${c}`).join(', ');
  const g = new ScalarCodegen(compileScalarClosure, {
    col: (i) => `v${i}`,
    row: fill === '' ? 'inRow' : `(${fill}, inRow)`,
    bindStrings: true,
  });
  const expr = (e: ScalarExpr): string => g.expression(e);
  const filter = fused.filter === null ? null : expr(fused.filter);
  const keys = fused.project.slice(0, keyCount).map(expr);
  const args = argColumns.map((c) => (c === null ? null : expr(fused.project[c] as ScalarExpr)));
  return {
    cols,
    filter,
    keys,
    args,
    locals: [...cols.map((c) => `v${c}`), ...g.tempNames],
    params: [...g.params, 'inRow'],
    values: [...g.args, inRow],
  };
}

/** Pass 1: per row, filter, key and arguments, the columns read straight from the batch. */
function rowsSource(spec: KernelSpec): Generated {
  const { keyCount, argColumns } = spec;
  const code = rowCode(spec);
  const cols = code.cols;
  const nAggs = argColumns.length;
  const body: string[] = ['rowSlots[i] = NO_SLOT;', 'try {'];
  if (code.filter !== null) body.push(`  if ((${code.filter}) !== true) continue;`);
  const keys = code.keys;
  if (keyCount === 0) body.push(`  id = ''; key = null;`);
  else if (keyCount === 1)
    body.push(`  key = ${keys[0]};`, `  id = typeof key === 'number' ? key : singleKey(key);`);
  else body.push(`  key = [${keys.map((k) => `(${k})`).join(', ')}];`, '  id = encodeValues(key);');
  // COUNT(*) has no argument and the accumulate reads none: a Reduce of COUNT(*) alone writes none
  // (one store a row). Beside other aggregates its slot is still written, so the array stays packed.
  const argless = argColumns.every((c) => c === null);
  code.args.forEach((value, a) => {
    if (argless) return;
    body.push(`  rowArgs[i * ${nAggs} + ${a}] = ${value ?? 'null'};`);
  });
  body.push(
    '} catch (error) {',
    '  errors.report(error, input.rows[i], inputColumns, input.weights[i]);',
    '  continue;',
    '}',
    'rowIds[i] = id;',
    'rowKeys[i] = key;',
    'rowSlots[i] = 0;',
  );
  const indent = (pad: string): string => body.map((l) => pad + l).join('\n');
  const locals = ['id', 'key', ...code.locals];
  const source = [
    'return function generatedReduceRows(input, rows, rowArgs, errors) {',
    '  const n = rows.n;',
    '  const rowSlots = rows.rowSlots;',
    '  const rowIds = rows.rowIds;',
    '  const rowKeys = rows.rowKeys;',
    '  const inCols = input.cols;',
    `  let ${locals.join(', ')};`,
    '  if (inCols !== undefined) {',
    ...cols.map((c) => `    const c${c} = inCols[${c}];`),
    '    for (let i = 0; i < n; i++) {',
    ...cols.map((c) => `      v${c} = c${c}[i];`),
    indent('      '),
    '    }',
    '  } else {',
    '    const inRows = input.rows;',
    '    for (let i = 0; i < n; i++) {',
    '      const r = inRows[i];',
    ...cols.map((c) => `      v${c} = r[${c}];`),
    indent('      '),
    '    }',
    '  }',
    '};',
  ].join('\n');
  return {
    source,
    params: [...code.params, 'NO_SLOT', 'singleKey', 'encodeValues', 'inputColumns'],
    args: [...code.values, NO_SLOT, singleKey, encodeValues, spec.fused.inputColumns],
  };
}

/** Pass 3: each kept row into its group's partial; COUNT and integer SUM/AVG inline. */
function accumulateSource(spec: KernelSpec): Generated {
  const { argColumns, columns, pstride } = spec;
  const nAggs = argColumns.length;
  const params: string[] = ['NO_SLOT'];
  const args: unknown[] = [NO_SLOT];
  const bind = (value: unknown): string => {
    params.push(`q${params.length}`);
    args.push(value);
    return params[params.length - 1] as string;
  };
  const body: string[] = [];
  argColumns.forEach((c, a) => {
    if (c === null) return;
    const column = columns[a] as AggColumn;
    const col = bind(column);
    const inline = inlinePartial(column);
    body.push(`v = rowArgs[i * ${nAggs} + ${a}];`);
    if (inline === null) {
      body.push(`${col}.accumulate(slot, v, w, p);`);
      return;
    }
    const at = `base + ${inline.pbase}`;
    if (!inline.sums) {
      body.push(`if (v !== null) pd[${at}] += w;`);
      return;
    }
    const bigs = bind(inline.partialBigs);
    body.push(
      'if (v !== null) {',
      `  if (typeof v === 'number' && ${bigs}.size === 0 && ((r = pd[${at} + 1] + v * w), Number.isSafeInteger(r))) {`,
      `    pd[${at}] += w;`,
      `    pd[${at} + 1] = r;`,
      `  } else ${col}.accumulate(slot, v, w, p);`,
      '}',
    );
  });
  const source = [
    'return function generatedReduceAccumulate(rows, rowArgs, pd) {',
    '  const n = rows.n;',
    '  const rowSlots = rows.rowSlots;',
    '  const rowTouches = rows.rowTouches;',
    '  const weights = rows.weights;',
    '  let v, r;',
    '  for (let i = 0; i < n; i++) {',
    '    const slot = rowSlots[i];',
    '    if (slot === NO_SLOT) continue;',
    '    const p = rowTouches[i];',
    '    const w = weights[i];',
    `    const base = p * ${pstride};`,
    '    pd[base] += w;',
    ...body.map((l) => `    ${l}`),
    '  }',
    '};',
  ].join('\n');
  return { source, params, args };
}
