// Scalar expressions (the data: ./scalar-tree.ts): their printer and their compiler into closures over
// a row array. Types are resolved by the binder; the compiler picks a specialised implementation per
// node once (the arithmetic per type is scalar-arith.ts), so evaluation does no type dispatch beyond
// what SQL NULLs require.
import { SluiceError } from './errors.ts';
import type { Value } from './types.ts';
import { typeName } from './types.ts';
import { castValue, withoutCharPadding } from './cast.ts';
import {
  charLength,
  charOffset,
  checkInt,
  compareValues,
  formatValue,
  singleKey,
  valuesEqual,
} from './values.ts';
import { Decimal, div, divFloorCeil } from './decimal.ts';
import { arith, clampDigits, roundHalfAway } from './scalar-arith.ts';
import { type LikeMatcher, compileLike } from './like.ts';
import { Interval } from './time/interval.ts';
import { Jsonb } from './json/jsonb.ts';
import { SqlArray } from './array/sql-array.ts';
import { compileFunction } from './functions/compile-function.ts';
import { caseMapped } from './functions/text.ts';
import { isCoreFn, type RowFn, type ScalarExpr } from './scalar-tree.ts';
import { generateScalar } from './scalar-codegen.ts';
import { floatText } from './float-text.ts';

export { SCALAR_FNS, scalarChildren, type RowFn, type ScalarExpr, type ScalarFn } from './scalar-tree.ts';

/** Deterministic text of an expression, for EXPLAIN and for structural equality in the binder. */
export function printScalar(e: ScalarExpr): string {
  switch (e.kind) {
    case 'const':
      return e.value === null
        ? 'NULL'
        : typeof e.value === 'string'
          ? `'${e.value.replaceAll("'", "''")}'${e.type.kind === 'uuid' || e.type.kind === 'bytea' ? `::${e.type.kind}` : ''}`
          : e.value instanceof Interval
            ? `interval '${e.value.toString()}'`
            : e.value instanceof Jsonb
              ? `'${e.value.text.replaceAll("'", "''")}'::jsonb`
              : e.value instanceof SqlArray
                ? `'${String(e.value).replaceAll("'", "''")}'::${typeName(e.type)}`
                : formatValue(e.value);
    case 'col':
      return `#${e.index}:${e.name}`;
    case 'call':
      return `${e.fn}(${e.args.map(printScalar).join(', ')})`;
    case 'and':
    case 'or':
      return `${e.kind}(${e.args.map(printScalar).join(', ')})`;
    case 'case':
      return `case(${e.whens.map((w) => `${printScalar(w.when)} => ${printScalar(w.then)}`).join(', ')}${e.else === null ? '' : `, else ${printScalar(e.else)}`})`;
    case 'coalesce':
      return `coalesce(${e.args.map(printScalar).join(', ')})`;
    case 'in':
      return `${e.negated ? 'not_in' : 'in'}(${printScalar(e.operand)}, [${e.list.map(printScalar).join(', ')}])`;
    case 'cast':
      return `cast(${printScalar(e.operand)} as ${typeName(e.type)})`;
  }
}

/** The expression with every column index `i` replaced by `to(i)` (moving it onto another row shape). */
export function remapColumns(e: ScalarExpr, to: (index: number) => number): ScalarExpr {
  const r = (x: ScalarExpr): ScalarExpr => remapColumns(x, to);
  switch (e.kind) {
    case 'const':
      return e;
    case 'col':
      return { ...e, index: to(e.index) };
    case 'call':
    case 'and':
    case 'or':
    case 'coalesce':
      return { ...e, args: e.args.map(r) };
    case 'case':
      return {
        ...e,
        whens: e.whens.map((w) => ({ when: r(w.when), then: r(w.then) })),
        else: e.else === null ? null : r(e.else),
      };
    case 'in':
      return { ...e, operand: r(e.operand), list: e.list.map(r) };
    case 'cast':
      return { ...e, operand: r(e.operand) };
  }
}

/** Column indexes an expression reads. */
export function columnsOf(e: ScalarExpr, out: Set<number> = new Set()): Set<number> {
  switch (e.kind) {
    case 'const':
      break;
    case 'col':
      out.add(e.index);
      break;
    case 'call':
    case 'and':
    case 'or':
    case 'coalesce':
      for (const a of e.args) columnsOf(a, out);
      break;
    case 'case':
      for (const w of e.whens) {
        columnsOf(w.when, out);
        columnsOf(w.then, out);
      }
      if (e.else !== null) columnsOf(e.else, out);
      break;
    case 'in':
      columnsOf(e.operand, out);
      for (const a of e.list) columnsOf(a, out);
      break;
    case 'cast':
      columnsOf(e.operand, out);
      break;
  }
  return out;
}

/** How `||` writes an operand that is not text: a float as PostgreSQL writes its type (1e+20, 1e+06). */
function operandText(arg: ScalarExpr): (v: Value) => string {
  const type = arg.type;
  if (type.kind !== 'float') return formatValue;
  const bits = type.bits;
  return (v) => (typeof v === 'number' ? floatText(v, bits) : formatValue(v));
}

function compileCall(e: Extract<ScalarExpr, { kind: 'call' }>): RowFn {
  const args = e.args.map(compileScalarClosure);
  const fn = e.fn;
  if (!isCoreFn(fn)) {
    return compileFunction(
      fn,
      args,
      e.args.map((a) => a.type),
    );
  }
  const a0 = args[0] as RowFn;
  const a1 = args[1] as RowFn;
  const argType = (e.args[0] as ScalarExpr).type;
  switch (fn) {
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'mod': {
      const op = arith(fn, e.type);
      return (row) => op(a0(row), a1(row));
    }
    case 'neg':
      if (e.type.kind === 'int') {
        const bits = e.type.bits;
        return (row) => {
          const v = a0(row);
          if (v === null) return null;
          return typeof v === 'number' ? checkInt(v === 0 ? 0 : -v, bits) : checkInt(-(v as bigint), bits);
        };
      }
      if (e.type.kind === 'numeric') {
        return (row) => {
          const v = a0(row);
          return v === null ? null : (v as Decimal).neg();
        };
      }
      return (row) => {
        const v = a0(row);
        return v === null ? null : -(v as number);
      };
    case 'eq':
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? null : valuesEqual(a, b);
      };
    case 'ne':
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? null : !valuesEqual(a, b);
      };
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge': {
      const test =
        fn === 'lt'
          ? (c: number) => c < 0
          : fn === 'le'
            ? (c: number) => c <= 0
            : fn === 'gt'
              ? (c: number) => c > 0
              : (c: number) => c >= 0;
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? null : test(compareValues(a, b));
      };
    }
    case 'not':
      return (row) => {
        const v = a0(row);
        return v === null ? null : !v;
      };
    case 'is_distinct_from':
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? a !== b : !valuesEqual(a, b);
      };
    case 'is_not_distinct_from':
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? a === b : valuesEqual(a, b);
      };
    case 'is_null':
      return (row) => a0(row) === null;
    case 'is_not_null':
      return (row) => a0(row) !== null;
    case 'like':
    case 'ilike': {
      const insensitive = fn === 'ilike';
      const patternExpr = e.args[1] as ScalarExpr;
      if (patternExpr.kind === 'const') {
        if (patternExpr.value === null) return () => null;
        const re = compileLike(String(patternExpr.value), insensitive);
        return (row) => {
          const v = a0(row);
          return v === null ? null : re.test(v as string);
        };
      }
      const cache = new Map<string, LikeMatcher>();
      return (row) => {
        const v = a0(row);
        const p = a1(row);
        if (v === null || p === null) return null;
        let re = cache.get(p as string);
        if (re === undefined) {
          re = compileLike(p as string, insensitive);
          if (cache.size < 1000) cache.set(p as string, re);
        }
        return re.test(v as string);
      };
    }
    case 'concat': {
      const text0 = operandText(e.args[0] as ScalarExpr);
      const text1 = operandText(e.args[1] as ScalarExpr);
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a === null || b === null ? null : text0(a) + text1(b);
      };
    }
    case 'abs':
      if (e.type.kind === 'int') {
        const bits = e.type.bits;
        return (row) => {
          const v = a0(row);
          if (v === null) return null;
          return typeof v === 'number'
            ? checkInt(Math.abs(v), bits)
            : checkInt((v as bigint) < 0n ? -(v as bigint) : (v as bigint), bits);
        };
      }
      if (e.type.kind === 'numeric') {
        return (row) => {
          const v = a0(row);
          return v === null ? null : (v as Decimal).abs();
        };
      }
      return (row) => {
        const v = a0(row);
        return v === null ? null : Math.abs(v as number);
      };
    case 'floor':
    case 'ceil': {
      if (e.type.kind === 'numeric') {
        const up = fn === 'ceil';
        const inner = e.args[0] as ScalarExpr;
        if (inner.kind === 'call' && inner.fn === 'div' && inner.type.kind === 'numeric') {
          // FLOOR(x / width): the bucket without the quotient's digits, the same value (decimal.ts).
          const x = compileScalarClosure(inner.args[0] as ScalarExpr);
          const y = compileScalarClosure(inner.args[1] as ScalarExpr);
          return (row) => {
            const a = x(row);
            const b = y(row); // both evaluated, as the division would (an error in either shows)
            if (a === null || b === null) return null;
            const fused = divFloorCeil(a as Decimal, b as Decimal, up);
            if (fused !== null) return fused;
            const q = div(a as Decimal, b as Decimal);
            return up ? q.ceil() : q.floor();
          };
        }
        return (row) => {
          const v = a0(row);
          return v === null ? null : up ? (v as Decimal).ceil() : (v as Decimal).floor();
        };
      }
      const f = fn === 'floor' ? Math.floor : Math.ceil;
      return (row) => {
        const v = a0(row);
        if (v === null) return null;
        return typeof v === 'bigint' ? Number(v) : f(v as number);
      };
    }
    case 'round': {
      if (e.type.kind === 'numeric') {
        // Half away from zero on the exact digits (round(2.5) = 3, round(-2.5) = -3).
        return (row) => {
          const v = a0(row);
          if (v === null) return null;
          if (args.length === 1) return (v as Decimal).round(0);
          const d = a1(row);
          return d === null ? null : (v as Decimal).round(clampDigits(d));
        };
      }
      if (args.length === 1) {
        return (row) => {
          const v = a0(row);
          if (v === null) return null;
          return typeof v === 'bigint' ? Number(v) : roundHalfAway(v as number, 0);
        };
      }
      return (row) => {
        const v = a0(row);
        const d = a1(row);
        if (v === null || d === null) return null;
        return roundHalfAway(typeof v === 'bigint' ? Number(v) : (v as number), Number(d));
      };
    }
    case 'lower':
      return (row) => {
        const v = a0(row);
        return v === null ? null : caseMapped((v as string).toLowerCase());
      };
    case 'upper':
      return (row) => {
        const v = a0(row);
        return v === null ? null : caseMapped((v as string).toUpperCase());
      };
    case 'length':
      return (row) => {
        const v = a0(row);
        if (v === null) return null;
        const s =
          argType.kind === 'text' && argType.fixed === true ? withoutCharPadding(v as string) : (v as string);
        return charLength(s);
      };
    case 'substring': {
      const a2 = args[2];
      return (row) => {
        const v = a0(row);
        const start = a1(row);
        const len = a2 === undefined ? undefined : a2(row);
        if (v === null || start === null || len === null) return null;
        const text = v as string;
        const s = Number(start);
        const skip = Math.max(s - 1, 0);
        const from = charOffset(text, skip);
        if (len === undefined) return text.slice(from);
        const l = Number(len);
        if (l < 0) throw new SluiceError('INVALID_VALUE', 'negative substring length not allowed');
        const end = s + l; // exclusive, 1-based
        return text.slice(from, charOffset(text, Math.max(end - 1, 0) - skip, from));
      };
    }
    case 'nullif':
      return (row) => {
        const a = a0(row);
        const b = a1(row);
        return a !== null && b !== null && valuesEqual(a, b) ? null : a;
      };
    case 'subquery_value':
      // (rows, value): the value of a subquery of at most one row (NULL rows: none, padded); with
      // more, PostgreSQL's cardinality error, so a view holding such a row refuses reads.
      return (row) => {
        const n = a0(row);
        if (n !== null && Number(n) > 1) {
          throw new SluiceError(
            'CARDINALITY_VIOLATION',
            'more than one row returned by a subquery used as an expression',
          );
        }
        return a1(row);
      };
  }
}

/**
 * The expression compiled for evaluation: generated code for its common cases (./scalar-codegen.ts)
 * over the closures below, which stay the reference for every other case.
 */
export function compileScalar(e: ScalarExpr): RowFn {
  return generateScalar(e, compileScalarClosure) ?? compileScalarClosure(e);
}

/** The expression as a tree of closures: the reference compiler. */
export function compileScalarClosure(e: ScalarExpr): RowFn {
  switch (e.kind) {
    case 'const': {
      const v = e.value;
      return () => v;
    }
    case 'col': {
      const i = e.index;
      return (row) => row[i] as Value;
    }
    case 'call':
      return compileCall(e);
    case 'and': {
      const args = e.args.map(compileScalarClosure);
      return (row) => {
        let sawNull = false;
        for (const f of args) {
          const v = f(row);
          if (v === false) return false;
          if (v === null) sawNull = true;
        }
        return sawNull ? null : true;
      };
    }
    case 'or': {
      const args = e.args.map(compileScalarClosure);
      return (row) => {
        let sawNull = false;
        for (const f of args) {
          const v = f(row);
          if (v === true) return true;
          if (v === null) sawNull = true;
        }
        return sawNull ? null : false;
      };
    }
    case 'case': {
      const whens = e.whens.map((w) => ({
        when: compileScalarClosure(w.when),
        then: compileScalarClosure(w.then),
      }));
      const otherwise = e.else === null ? null : compileScalarClosure(e.else);
      return (row) => {
        for (const w of whens) if (w.when(row) === true) return w.then(row);
        return otherwise === null ? null : otherwise(row);
      };
    }
    case 'coalesce': {
      const args = e.args.map(compileScalarClosure);
      return (row) => {
        for (const f of args) {
          const v = f(row);
          if (v !== null) return v;
        }
        return null;
      };
    }
    case 'in': {
      const operand = compileScalarClosure(e.operand);
      const negated = e.negated;
      if (e.list.every((x) => x.kind === 'const')) {
        // A list of constants is a set: one lookup per row however long the list. Map keys
        // compare like SQL equality here (SameValueZero: NaN = NaN, -0 = 0; bigints encoded).
        const members = new Set<Value>();
        let hasNull = false;
        for (const x of e.list as readonly Extract<ScalarExpr, { kind: 'const' }>[]) {
          if (x.value === null) hasNull = true;
          else members.add(singleKey(x.value));
        }
        return (row) => {
          const v = operand(row);
          if (v === null) return null;
          if (members.has(singleKey(v))) return !negated;
          return hasNull ? null : negated;
        };
      }
      const list = e.list.map(compileScalarClosure);
      return (row) => {
        const v = operand(row);
        if (v === null) return null;
        let sawNull = false;
        for (const f of list) {
          const x = f(row);
          if (x === null) sawNull = true;
          else if (valuesEqual(v, x)) return !negated;
        }
        return sawNull ? null : negated;
      };
    }
    case 'cast': {
      const operand = compileScalarClosure(e.operand);
      const from = e.operand.type;
      const to = e.type;
      if (from.kind === 'int' && to.kind === 'float' && to.bits === 64) {
        return (row) => {
          const v = operand(row);
          return typeof v === 'bigint' ? Number(v) : v;
        };
      }
      if (from.kind === 'int' && to.kind === 'numeric' && to.precision === undefined) {
        return (row) => {
          const v = operand(row);
          return v === null ? null : Decimal.fromInt(v as number | bigint);
        };
      }
      return (row) => castValue(operand(row), from, to);
    }
  }
}
