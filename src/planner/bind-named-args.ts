// Named arguments (`make_interval(days => 3)`, `f(1, b := 2)`): PostgreSQL's named and mixed
// notation, rewritten to the positional call it stands for before the call is bound. The parser
// already refused a positional argument after a named one and a name given twice; here a name the
// function does not have, or one whose parameter an argument already filled by position, is
// PostgreSQL's "function f(…) does not exist".
import { SluiceError } from '../common/errors.ts';
import { typeName } from '../common/types.ts';
import type { Expr } from '../parser/ast.ts';
import { numberLiteral } from '../parser/expr-builder.ts';
import { bindExpr, type BindContext } from './bind-expr.ts';
import { sqlFunctionParams } from './sql-functions.ts';

type Call = Extract<Expr, { kind: 'function' }>;

/** A parameter of a built-in function and whether it has a default (0 for make_interval's). */
interface Param {
  readonly name: string;
  readonly defaultZero: boolean;
}

const required = (...names: string[]): Param[] => names.map((name) => ({ name, defaultZero: false }));
const zeros = (...names: string[]): Param[] => names.map((name) => ({ name, defaultZero: true }));

/** The built-in functions that have named parameters in PostgreSQL (pg_proc.proargnames). */
const BUILTIN_PARAMS: ReadonlyMap<string, readonly Param[]> = new Map([
  ['make_interval', zeros('years', 'months', 'weeks', 'days', 'hours', 'mins', 'secs')],
  ['make_date', required('year', 'month', 'day')],
  ['make_time', required('hour', 'min', 'sec')],
  // PostgreSQL names make_timestamp's day `mday` (make_date's is `day`)
  ['make_timestamp', required('year', 'month', 'mday', 'hour', 'min', 'sec')],
]);

/** `e` with its named arguments put in their parameters' places (gaps: the parameters' defaults). */
export function positionalCall(e: Call, ctx: BindContext): Call {
  const names = e.argNames;
  if (names === undefined) return e;
  const sqlParams = sqlFunctionParams(e.name);
  const params: readonly Param[] | undefined =
    sqlParams !== undefined ? required(...sqlParams) : BUILTIN_PARAMS.get(e.name);
  const noSuchFunction = (): SluiceError => {
    const shown = e.args.map((a, i) => {
      const type = typeName(bindExpr(a, ctx).type);
      const n = names[i];
      return n === undefined ? type : `${n.name} => ${type}`;
    });
    return new SluiceError('UNKNOWN_FUNCTION', `function ${e.name}(${shown.join(', ')}) does not exist`, {
      position: e.pos,
      hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
    });
  };
  if (params === undefined || e.args.length > params.length) throw noSuchFunction();
  const placed: (Expr | undefined)[] = new Array<Expr | undefined>(params.length).fill(undefined);
  e.args.forEach((a, i) => {
    const n = names[i];
    const at = n === undefined ? i : params.findIndex((p) => p.name === n.name);
    // an unknown name, or a parameter an argument already fills by position
    if (at < 0 || placed[at] !== undefined) throw noSuchFunction();
    placed[at] = a;
  });
  let last = placed.length;
  while (last > 0 && placed[last - 1] === undefined && params[last - 1]?.defaultZero === true) last--;
  const args: Expr[] = [];
  for (let i = 0; i < last; i++) {
    const a = placed[i];
    if (a !== undefined) args.push(a);
    else if (params[i]?.defaultZero === true) args.push(numberLiteral('0', e.pos));
    else throw noSuchFunction();
  }
  const { argNames: _named, ...positional } = e;
  return { ...positional, args };
}
