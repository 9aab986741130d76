// The EXPLAIN print of a plan's scalar expressions and types, for the dataflow JSON. A copy of
// printScalar (src/common/scalar-expr.ts) and typeName (src/common/types.ts): the layer rules let
// src/console import only src/server, so the console cannot call them. test/console/console-shared
// checks this copy against the originals for every kind of expression and every type, so the
// console shows the expressions exactly as EXPLAIN DATAFLOW does. The types come from the
// runtime's own signature (no import of src/common either).
import type { SluiceRuntime } from '../server/runtime.ts';

export type DataflowPlan = ReturnType<SluiceRuntime['engine']['viewPlan']>;
export type PlanNode = DataflowPlan['nodes'][number];
export type ScalarExpr = Extract<PlanNode, { kind: 'join' }>['leftKey'][number];
type SqlType = ScalarExpr['type'];
type Value = Extract<ScalarExpr, { kind: 'const' }>['value'];

function printType(type: SqlType): string {
  switch (type.kind) {
    case 'bool':
      return 'boolean';
    case 'int':
      return type.bits === 16 ? 'smallint' : type.bits === 32 ? 'integer' : 'bigint';
    case 'float':
      return type.bits === 32 ? 'real' : 'double precision';
    case 'numeric':
      return type.precision !== undefined
        ? `numeric(${type.precision}${type.scale !== undefined ? `,${type.scale}` : ''})`
        : 'numeric';
    case 'text':
      if (type.maxLength === undefined) return 'text';
      return `${type.fixed === true ? 'character' : 'character varying'}(${type.maxLength})`;
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    case 'unknown':
      return 'unknown';
  }
}

function printValue(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // String() prints NaN, Infinity and -Infinity as formatValue does.
  return String(v);
}

export function printExpr(e: ScalarExpr): string {
  switch (e.kind) {
    case 'const':
      return printValue(e.value);
    case 'col':
      return `#${e.index}:${e.name}`;
    case 'call':
      return `${e.fn}(${e.args.map(printExpr).join(', ')})`;
    case 'and':
    case 'or':
      return `${e.kind}(${e.args.map(printExpr).join(', ')})`;
    case 'case':
      return `case(${e.whens.map((w) => `${printExpr(w.when)} => ${printExpr(w.then)}`).join(', ')}${e.else === null ? '' : `, else ${printExpr(e.else)}`})`;
    case 'coalesce':
      return `coalesce(${e.args.map(printExpr).join(', ')})`;
    case 'in':
      return `${e.negated ? 'not_in' : 'in'}(${printExpr(e.operand)}, [${e.list.map(printExpr).join(', ')}])`;
    case 'cast':
      return `cast(${printExpr(e.operand)} as ${printType(e.type)})`;
  }
}
