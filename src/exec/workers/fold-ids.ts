// A fold's group ids (the downstream COUNT(*) Reduce's group key, as partition-hash.ts's `groupId`
// makes it) for a whole step of changes, written out as one generated function over the change
// columns: each key expression inline (scalar-codegen.ts), reading only the columns it uses. It
// replaces, per change, copying every column into a row and calling each key's compiled function
// on it — the two largest lines of a partition's fold in the two-worker profile.
import { ScalarCodegen } from '../../common/scalar-codegen.ts';
import { columnsOf, compileScalarClosure, type ScalarExpr } from '../../common/scalar-expr.ts';
import type { Value } from '../../common/types.ts';
import { encodeValues, singleKey } from '../../common/values.ts';
import { generatedFunction } from '../../common/generated-function.ts';

/** Writes the group id of changes 0 … n − 1 (`cols[c][j]`) into `ids[j]`; throws a key's row error. */
export type FoldIds = (cols: readonly ArrayLike<Value>[], n: number, ids: Value[]) => void;

export function foldIdsFunction(keys: readonly ScalarExpr[]): FoldIds {
  const used = new Set<number>();
  for (const k of keys) columnsOf(k, used);
  const cols = [...used].sort((x, y) => x - y);
  // Cases the generator does not inline run the key's closure on a scratch row, filled when they run.
  const width = cols.length === 0 ? 0 : (cols[cols.length - 1] as number) + 1;
  const inRow = new Array<Value>(width).fill(null);
  const fill = cols.map((c) => `inRow[${c}] = v${c}`).join(', ');
  const g = new ScalarCodegen(compileScalarClosure, {
    col: (i) => `v${i}`,
    row: fill === '' ? 'inRow' : `(${fill}, inRow)`,
    bindStrings: true,
  });
  const exprs = keys.map((k) => g.expression(k));
  let id: string;
  if (exprs.length === 1) id = `(key = ${exprs[0]}, typeof key === 'number' ? key : singleKey(key))`;
  else id = `encodeValues([${exprs.map((e) => `(${e})`).join(', ')}])`;
  const locals = ['key', ...cols.map((c) => `v${c}`), ...g.tempNames];
  const source = [
    'return function generatedFoldIds(cols, n, ids) {',
    ...cols.map((c) => `  const c${c} = cols[${c}];`),
    `  let ${locals.join(', ')};`,
    '  for (let j = 0; j < n; j++) {',
    ...cols.map((c) => `    v${c} = c${c}[j];`),
    `    ids[j] = ${id};`,
    '  }',
    '};',
  ].join('\n');
  const params = [...g.params, 'singleKey', 'encodeValues', 'inRow'];
  const args: unknown[] = [...g.args, singleKey, encodeValues, inRow];
  const factory = generatedFunction(...params, source) as (...a: unknown[]) => FoldIds;
  return factory(...args);
}
