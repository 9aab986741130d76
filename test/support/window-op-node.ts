// A WindowOp for operator unit tests: rows [p, ts, …], PARTITION BY p ORDER BY ts (or no ORDER BY),
// the functions' values as trailing columns f0, f1, ….
import type { WindowFn } from '../../src/common/window.ts';
import { T, type SqlType } from '../../src/common/types.ts';
import type { DataflowNode } from '../../src/ivm/dataflow-plan.ts';
import { WindowOp } from '../../src/ivm/ops/window-op.ts';

/** `rest`: the input's columns after p and ts, by name and type. */
export function windowOpOver(
  rest: readonly (readonly [string, SqlType])[],
  functions: readonly WindowFn[],
  ordered = true,
): WindowOp {
  const node: Extract<DataflowNode, { kind: 'window' }> = {
    id: 1,
    kind: 'window',
    inputs: [0],
    partitionBy: [0],
    orderBy: ordered ? [{ index: 1, desc: false, nullsFirst: false }] : [],
    functions,
    columns: [
      { name: 'p', type: T.int32 },
      { name: 'ts', type: T.int32 },
      ...rest.map(([name, type]) => ({ name, type })),
      ...functions.map((f, i) => ({ name: `f${i}`, type: f.type })),
    ],
    stateId: 'v/window1',
  };
  return new WindowOp(node);
}
