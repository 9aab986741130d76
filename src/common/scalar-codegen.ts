// Scalar expressions as generated JavaScript: one function per expression, with the common cases of
// its nodes (numbers in range, non-NaN comparisons, three-valued logic) written inline, so a hot
// expression is one piece of code with its own type feedback instead of a tree of shared closures
// (the canonical profile: FLOOR(total / 10) cost seven closure calls per row, 15% of the pipeline).
// Every other case — bigints, decimals, overflow, division by zero, NaN, text functions — runs the
// node's closure (`closureOf`, the reference compiler), so results and errors are exactly the
// closures'. A node that falls back re-evaluates its subtree with closures: expressions are pure.
import { scalarChildren, type RowFn, type ScalarExpr } from './scalar-tree.ts';
import type { SqlType, Value } from './types.ts';
import { generatedFunction } from './generated-function.ts';
import { compareText } from './text-order.ts';

/** Expressions larger than this stay closures: generated text grows with the tree. */
const MAX_GENERATED_NODES = 200;

const INT_RANGE = {
  16: [-32768, 32767],
  32: [-2147483648, 2147483647],
  64: [-9007199254740991, 9007199254740991],
};

/**
 * How generated code reads the row: `col(i)` is the code for column i's value, `row` the code for a
 * row array holding at least the expression's columns (passed to the closures of the cases not
 * inlined). A standalone function reads its parameter `row`; a Reduce kernel (reduce-kernel.ts)
 * reads its columns into locals and fills a scratch row only when a closure needs one.
 */
export interface RowRefs {
  readonly col: (index: number) => string;
  readonly row: string;
  /** Strings are passed in as parameters rather than written as JSON-quoted literals. */
  readonly bindStrings?: boolean;
}

const PARAMETER_ROW: RowRefs = { col: (i) => `row[${i}]`, row: 'row' };

/**
 * Writes JavaScript for scalar expressions. One generator can write several expressions into one
 * function body: their temporaries (`t0`, `t1`, …) and bound values (`p0`, `p1`, …) share its names.
 */
export class ScalarCodegen {
  private temps = 0;
  readonly params: string[] = [];
  readonly args: unknown[] = [];
  /** Nodes that became plain closure calls (all of them: nothing to gain). */
  externs = 0;
  nodes = 0;

  constructor(
    private readonly closureOf: (e: ScalarExpr) => RowFn,
    private readonly refs: RowRefs = PARAMETER_ROW,
  ) {}

  temp(): string {
    return `t${this.temps++}`;
  }

  get tempNames(): string[] {
    return Array.from({ length: this.temps }, (_, i) => `t${i}`);
  }

  /** A value passed into the generated function as a parameter: its name in the code. */
  bind(value: unknown): string {
    const name = `p${this.params.length}`;
    this.params.push(name);
    this.args.push(value);
    return name;
  }

  /** The node evaluated by its closure (the exact reference behaviour). */
  extern(e: ScalarExpr): string {
    this.externs++;
    return `${this.bind(this.closureOf(e))}(${this.refs.row})`;
  }

  /** The expression's code; a tree too large to write out is one closure call. */
  expression(e: ScalarExpr): string {
    if (countNodes(e, MAX_GENERATED_NODES) > MAX_GENERATED_NODES) return this.extern(e);
    return this.expr(e);
  }

  expr(e: ScalarExpr): string {
    this.nodes++;
    switch (e.kind) {
      case 'const':
        return this.constant(e.value);
      case 'col':
        return this.refs.col(e.index);
      case 'and':
      case 'or':
        return this.logic(e.kind, e.args);
      case 'case': {
        let code = e.else === null ? 'null' : this.expr(e.else);
        for (let i = e.whens.length - 1; i >= 0; i--) {
          const w = e.whens[i] as { readonly when: ScalarExpr; readonly then: ScalarExpr };
          code = `((${this.expr(w.when)}) === true ? (${this.expr(w.then)}) : ${code})`;
        }
        return code;
      }
      case 'coalesce': {
        const t = this.temp();
        let code = 'null';
        for (let i = e.args.length - 1; i >= 0; i--)
          code = `((${t} = ${this.expr(e.args[i] as ScalarExpr)}) !== null ? ${t} : ${code})`;
        return code;
      }
      case 'cast':
        if (e.operand.type.kind === 'int' && e.type.kind === 'float' && e.type.bits === 64) {
          const t = this.temp();
          return `(${t} = ${this.expr(e.operand)}, typeof ${t} === 'bigint' ? Number(${t}) : ${t})`;
        }
        return this.extern(e);
      case 'call':
        return this.call(e);
      case 'in':
        return this.extern(e);
    }
  }

  private constant(v: Value): string {
    if (v === null) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0)) return `(${String(v)})`;
    if (typeof v === 'string' && this.refs.bindStrings !== true) return JSON.stringify(v);
    return this.bind(v);
  }

  /** AND/OR as the closures evaluate them: in order, stopping at the deciding value only. */
  private logic(kind: 'and' | 'or', args: readonly ScalarExpr[]): string {
    const decides = kind === 'and' ? 'false' : 'true';
    const otherwise = kind === 'and' ? 'true' : 'false';
    const sawNull = this.temp();
    const v = this.temp();
    let code = `(${sawNull} ? null : ${otherwise})`;
    for (let i = args.length - 1; i >= 0; i--) {
      code = `((${v} = ${this.expr(args[i] as ScalarExpr)}) === ${decides} ? ${decides} : (${v} === null && (${sawNull} = true), ${code}))`;
    }
    return `(${sawNull} = false, ${code})`;
  }

  private call(e: Extract<ScalarExpr, { kind: 'call' }>): string {
    const [x, y] = e.args;
    switch (e.fn) {
      case 'not': {
        const a = this.temp();
        return `(${a} = ${this.expr(x as ScalarExpr)}, ${a} === null ? null : !${a})`;
      }
      case 'is_null':
        return `((${this.expr(x as ScalarExpr)}) === null)`;
      case 'is_not_null':
        return `((${this.expr(x as ScalarExpr)}) !== null)`;
      case 'floor':
      case 'ceil':
      case 'round':
      case 'trunc': {
        // Of an integer made a double (PostgreSQL's floor(integer) is floor(double precision)), the
        // value is already whole: the conversion is the answer, no rounding call or second test.
        if (e.args.length === 1 && e.type.kind === 'float' && isIntegerAsDouble(x as ScalarExpr)) {
          if (e.fn !== 'trunc') return this.expr(x as ScalarExpr);
          const w = this.temp(); // trunc gives no -0
          return `(${w} = ${this.expr(x as ScalarExpr)}, ${w} === null ? null : ${w} + 0)`;
        }
        if (e.fn === 'round' || e.fn === 'trunc') return this.extern(e);
        if (e.type.kind === 'numeric' || !isNumberType((x as ScalarExpr).type)) return this.extern(e);
        const a = this.temp();
        const f = e.fn === 'floor' ? 'Math.floor' : 'Math.ceil';
        return `(${a} = ${this.expr(x as ScalarExpr)}, typeof ${a} === 'number' ? ${f}(${a}) : ${a} === null ? null : ${this.extern(e)})`;
      }
      case 'eq':
      case 'ne':
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge':
        return this.comparison(e, x as ScalarExpr, y as ScalarExpr);
      case 'is_distinct_from':
      case 'is_not_distinct_from':
        return this.nullSafeComparison(e, x as ScalarExpr, y as ScalarExpr);
      case 'add':
      case 'sub':
      case 'mul':
      case 'div':
      case 'mod':
        return this.arithmetic(e, x as ScalarExpr, y as ScalarExpr);
      default:
        return this.extern(e);
    }
  }

  /**
   * Both operands numbers (not NaN) of number types, or both strings of text types: JS's operators
   * are SQL's there; any other type (a date, a time, a decimal) keeps its own comparison, the closure.
   */
  private comparison(e: ScalarExpr, x: ScalarExpr, y: ScalarExpr): string {
    if (e.kind !== 'call') return this.extern(e);
    const numbers = isNumberType(x.type) && isNumberType(y.type);
    const texts = x.type.kind === 'text' && y.type.kind === 'text';
    if (!numbers && !texts) return this.extern(e);
    const op = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=' }[e.fn as 'eq'];
    const a = this.temp();
    const b = this.temp();
    const plain = numbers
      ? `typeof ${a} === 'number' && typeof ${b} === 'number' && ${a} === ${a} && ${b} === ${b}`
      : `typeof ${a} === 'string' && typeof ${b} === 'string'`;
    // Text order is by code point: `<` compares UTF-16 units (a surrogate before U+E000–U+FFFF).
    const ordered = texts && (e.fn === 'lt' || e.fn === 'le' || e.fn === 'gt' || e.fn === 'ge');
    const decide = ordered ? `${this.bind(compareText)}(${a}, ${b}) ${op} 0` : `${a} ${op} ${b}`;
    return `(${a} = ${this.expr(x)}, ${b} = ${this.expr(y)}, ${a} === null || ${b} === null ? null : (${plain}) ? ${decide} : ${this.extern(e)})`;
  }

  /**
   * IS [NOT] DISTINCT FROM: a NULL operand is compared as a value; two numbers (not NaN) or two
   * strings by JS's operators, as in `comparison` (0 and -0 are not distinct there either).
   */
  private nullSafeComparison(e: Extract<ScalarExpr, { kind: 'call' }>, x: ScalarExpr, y: ScalarExpr): string {
    const numbers = isNumberType(x.type) && isNumberType(y.type);
    const texts = x.type.kind === 'text' && y.type.kind === 'text';
    if (!numbers && !texts) return this.extern(e);
    const op = e.fn === 'is_distinct_from' ? '!==' : '===';
    const a = this.temp();
    const b = this.temp();
    const plain = numbers
      ? `typeof ${a} === 'number' && typeof ${b} === 'number' && ${a} === ${a} && ${b} === ${b}`
      : `typeof ${a} === 'string' && typeof ${b} === 'string'`;
    return `(${a} = ${this.expr(x)}, ${b} = ${this.expr(y)}, ${a} === null || ${b} === null ? ${a} ${op} ${b} : (${plain}) ? ${a} ${op} ${b} : ${this.extern(e)})`;
  }

  private arithmetic(e: Extract<ScalarExpr, { kind: 'call' }>, x: ScalarExpr, y: ScalarExpr): string {
    const type = e.type;
    // Numbers of number types only: a date or an interval operand has arithmetic of its own.
    if (!isNumberType(x.type) || !isNumberType(y.type)) return this.extern(e);
    const a = this.temp();
    const b = this.temp();
    const r = this.temp();
    let ok: string; // assigns the result to r and says whether it stands; otherwise the closure decides
    let result = r;
    if (type.kind === 'int') {
      const [min, max] = INT_RANGE[type.bits];
      const inRange = `${r} >= ${min} && ${r} <= ${max}`;
      switch (e.fn) {
        case 'add':
          ok = `(${r} = ${a} + ${b}, ${inRange})`;
          break;
        case 'sub':
          ok = `(${r} = ${a} - ${b}, ${inRange})`;
          break;
        case 'mul':
          ok = `(${r} = ${a} * ${b} + 0, ${inRange})`; // + 0: no -0 for integers
          break;
        case 'div':
          // Two int32s (not -1, whose quotient of -2^31 leaves int32): an int32 division, which
          // TurboFan emits only for operands typed int32 (hence `| 0` on each) and whose result is
          // truncated; by a constant it is a multiply and shifts. The histogram key's `total / 10`:
          // 2.3 -> 1.6 ns a row in a stand-alone loop. Else the quotient of doubles, truncated.
          ok = `${b} !== 0 && ((${a} | 0) === ${a} && (${b} | 0) === ${b} && ${b} !== -1 ? (${r} = ((${a} | 0) / (${b} | 0)) | 0, ${inRange}) : ${a} < 4503599627370496 && ${a} > -4503599627370496 && (${r} = Math.trunc(${a} / ${b}) + 0, ${inRange}))`;
          break;
        case 'mod':
          ok = `${b} !== 0 && (${r} = ${a} % ${b}, true)`;
          result = `(${r} === 0 ? 0 : ${r})`;
          break;
        default:
          return this.extern(e);
      }
    } else if (type.kind === 'float' && type.bits === 64) {
      const finiteOrFromNonFinite = `(${r} - ${r} === 0 || ${a} - ${a} !== 0 || ${b} - ${b} !== 0)`;
      switch (e.fn) {
        case 'add':
          ok = `(${r} = ${a} + ${b}, ${finiteOrFromNonFinite})`;
          break;
        case 'sub':
          ok = `(${r} = ${a} - ${b}, ${finiteOrFromNonFinite})`;
          break;
        case 'mul':
          ok = `(${r} = ${a} * ${b}, ${finiteOrFromNonFinite} && (${r} !== 0 || ${a} === 0 || ${b} === 0))`;
          break;
        case 'div':
          ok = `${b} !== 0 && (${r} = ${a} / ${b}, ${finiteOrFromNonFinite} && (${r} !== 0 || ${a} === 0 || ${b} - ${b} !== 0))`;
          break;
        default:
          return this.extern(e);
      }
    } else return this.extern(e);
    return `(${a} = ${this.expr(x)}, ${b} = ${this.expr(y)}, ${a} === null || ${b} === null ? null : typeof ${a} === 'number' && typeof ${b} === 'number' && ${ok} ? ${result} : ${this.extern(e)})`;
  }
}

/** A cast of an integer-typed expression to double precision: every value it gives is whole. */
function isIntegerAsDouble(x: ScalarExpr): boolean {
  return x.kind === 'cast' && x.type.kind === 'float' && x.type.bits === 64 && x.operand.type.kind === 'int';
}

function isNumberType(type: SqlType): boolean {
  return type.kind === 'int' || type.kind === 'float';
}

function countNodes(e: ScalarExpr, limit: number): number {
  let n = 0;
  const stack: ScalarExpr[] = [e];
  while (stack.length > 0 && n <= limit) {
    const x = stack.pop() as ScalarExpr;
    n++;
    stack.push(...scalarChildren(x));
  }
  return n;
}

/**
 * The expression as one generated function, or null when generating gains nothing (the whole
 * expression would be one closure call) or the tree is too large.
 */
export function generateScalar(e: ScalarExpr, closureOf: (e: ScalarExpr) => RowFn): RowFn | null {
  if (countNodes(e, MAX_GENERATED_NODES) > MAX_GENERATED_NODES) return null;
  const g = new ScalarCodegen(closureOf);
  const body = g.expr(e);
  if (g.externs === 1 && g.nodes === 1) return null;
  const temps = g.tempNames;
  const source =
    `return function generatedScalar(row) {\n` +
    (temps.length > 0 ? `  let ${temps.join(', ')};\n` : '') +
    `  return ${body};\n};`;
  // The text holds only temporaries, parameter names, column positions, finite numbers and
  // JSON-quoted strings; every other value is passed in as a parameter.
  const factory = generatedFunction(...g.params, source) as (...args: unknown[]) => RowFn;
  return factory(...g.args);
}
