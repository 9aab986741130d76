// Binding of the date/time operators and functions (PostgreSQL's manual, section 9.9): which
// operation `a + b` is for each pair of operand types, EXTRACT / date_part / date_trunc / AT TIME
// ZONE / make_* / age / to_char / to_timestamp, and NOW() and friends — constants of the statement's
// time in an ad-hoc SELECT, refused in a view (see refuseNowInView).
import { SluiceError, notSupported } from '../common/errors.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import type { SqlType, Value } from '../common/types.ts';
import { T, isNumeric, typeName } from '../common/types.ts';
import type { Expr, FromItem, Pos, SelectStmt } from '../parser/ast.ts';
import { exprChildren } from '../parser/statement-limits.ts';
import { extractUnit, truncUnit, type TimeKind } from '../common/time/fields.ts';
import { checkZone } from '../common/time/zone.ts';
import { formatMicros } from '../common/time/instant-micros.ts';
import { call, coerce, isConst, isStringLiteral } from './bind-coerce.ts';

const TIME_KINDS = new Set(['date', 'timestamp', 'timestamptz', 'time', 'interval']);

export function isTimeType(t: SqlType): boolean {
  return TIME_KINDS.has(t.kind);
}

function noOperator(l: SqlType, op: string, r: SqlType, pos: Pos): SluiceError {
  return new SluiceError('TYPE_MISMATCH', `operator does not exist: ${typeName(l)} ${op} ${typeName(r)}`, {
    position: pos,
    hint: 'no operator matches the given name and argument types; you might need to add explicit type casts',
  });
}

/** A string literal or NULL beside a date/time operand: the type PostgreSQL resolves it to. */
function adapt(e: ScalarExpr, other: SqlType, op: string, pos: Pos): ScalarExpr {
  if (!(e.type.kind === 'unknown' || isStringLiteral(e))) return e;
  if (other.kind === 'interval') return coerce(e, T.interval, pos);
  // `ts - '…'` is timestamp - timestamp (the unknown side takes the other's type); `ts + '…'` has
  // no timestamp + timestamp, so the literal is an interval.
  if (op === '-' && other.kind !== 'time') return coerce(e, other, pos);
  if (op === '+' || op === '-') return coerce(e, T.interval, pos);
  return e;
}

/** `l op r` where an operand is a date/time type, or undefined when neither is. */
export function bindTimeArithmetic(
  op: string,
  left: ScalarExpr,
  right: ScalarExpr,
  pos: Pos,
): ScalarExpr | undefined {
  if (!isTimeType(left.type) && !isTimeType(right.type)) return undefined;
  const l = isTimeType(left.type) ? left : adapt(left, right.type, op, pos);
  const r = isTimeType(right.type) ? right : adapt(right, l.type, op, pos);
  const lk = l.type.kind;
  const rk = r.type.kind;
  const numeric = (t: SqlType): boolean => isNumeric(t) || t.kind === 'unknown';
  const asInt = (e: ScalarExpr): ScalarExpr =>
    e.type.kind === 'unknown' ? coerce(e, T.int32, pos) : e.type.kind === 'int' ? e : coerce(e, T.int64, pos);
  const asDouble = (e: ScalarExpr): ScalarExpr => coerce(e, T.float64, pos);
  switch (op) {
    case '+':
    case '-': {
      const fn = op === '+' ? 'time_add' : 'time_sub';
      if (lk === 'date' && rk === 'int') return call(fn, [l, asInt(r)], T.date);
      if (op === '+' && lk === 'int' && rk === 'date') return call(fn, [asInt(l), r], T.date);
      if (op === '-' && lk === 'date' && rk === 'date') return call(fn, [l, r], T.int32);
      if (op === '+' && ((lk === 'date' && rk === 'time') || (lk === 'time' && rk === 'date')))
        return call(fn, [l, r], T.timestamp);
      if (lk === 'interval' && rk === 'interval') return call(fn, [l, r], T.interval);
      if (lk === 'time' && rk === 'interval') return call(fn, [l, r], T.time);
      if (op === '+' && lk === 'interval' && rk === 'time') return call(fn, [l, r], T.time);
      if (op === '-' && lk === 'time' && rk === 'time') return call(fn, [l, r], T.interval);
      if ((lk === 'date' || lk === 'timestamp') && rk === 'interval') return call(fn, [l, r], T.timestamp);
      if (op === '+' && lk === 'interval' && (rk === 'date' || rk === 'timestamp'))
        return call(fn, [l, r], T.timestamp);
      if (lk === 'timestamptz' && rk === 'interval') return call(fn, [l, r], T.timestamptz);
      if (op === '+' && lk === 'interval' && rk === 'timestamptz') return call(fn, [l, r], T.timestamptz);
      if (op === '-') {
        const both = [lk, rk];
        if (
          both.includes('timestamptz') &&
          both.every((k) => k === 'timestamptz' || k === 'timestamp' || k === 'date')
        )
          return call(fn, [coerce(l, T.timestamptz, pos), coerce(r, T.timestamptz, pos)], T.interval);
        if (both.every((k) => k === 'timestamp' || k === 'date'))
          return call(fn, [coerce(l, T.timestamp, pos), coerce(r, T.timestamp, pos)], T.interval);
      }
      break;
    }
    case '*':
      if (lk === 'interval' && numeric(r.type)) return call('time_mul', [l, asDouble(r)], T.interval);
      if (rk === 'interval' && numeric(l.type)) return call('time_mul', [asDouble(l), r], T.interval);
      break;
    case '/':
      if (lk === 'interval' && numeric(r.type)) return call('time_div', [l, asDouble(r)], T.interval);
      break;
    default:
      break;
  }
  throw noOperator(l.type, op, r.type, pos);
}

/** Unary minus of an interval, or undefined for other types. */
export function bindTimeNegation(operand: ScalarExpr): ScalarExpr | undefined {
  return operand.type.kind === 'interval' ? call('time_neg', [operand], T.interval) : undefined;
}

function fnMismatch(name: string, args: readonly ScalarExpr[], pos: Pos): SluiceError {
  return new SluiceError(
    'UNKNOWN_FUNCTION',
    `function ${name}(${args.map((a) => typeName(a.type)).join(', ')}) does not exist`,
    {
      position: pos,
      hint: 'no function matches the given name and argument types; you might need to add explicit type casts',
    },
  );
}

/** NOW() and the other functions of the current time, as PostgreSQL names them. */
export const NOW_FUNCTIONS = new Set([
  'now',
  'current_timestamp',
  'current_date',
  'current_time',
  'localtimestamp',
  'localtime',
  'transaction_timestamp',
  'statement_timestamp',
  'clock_timestamp',
  'timeofday',
  // Materialize's name for the logical clock a view's temporal filter reads (bind-temporal.ts).
  'mz_now',
]);

/** What a view that reads the clock elsewhere is told (bind-temporal.ts takes the filters out). */
export const TEMPORAL_HINT =
  "a view may read the clock only in a temporal filter: a top-level WHERE condition comparing a row's time with NOW() plus or minus a constant interval, e.g. ts > now() - interval '1 hour'";

/** The current time as the value of one of NOW_FUNCTIONS (session time zone UTC). */
function nowConst(name: string, pos: Pos): ScalarExpr {
  const type = clockFunctionType(name, pos);
  return { kind: 'const', value: clockValueAs(type, Date.now() * 1000), type };
}

/** The type one of NOW_FUNCTIONS returns (the ones with a time zone of their own are refused). */
export function clockFunctionType(name: string, pos: Pos): SqlType {
  switch (name) {
    case 'current_date':
      return T.date;
    case 'localtimestamp':
      return T.timestamp;
    case 'localtime':
      return T.time;
    case 'current_time':
    case 'timeofday':
      throw notSupported(name, pos, name === 'current_time' ? 'use localtime or now()' : 'use now()');
    default:
      return T.timestamptz;
  }
}

/** A clock reading (µs since the Unix epoch) as a value of `type`, one of clockFunctionType's. */
export function clockValueAs(type: SqlType, micros: number): Value {
  const instant = formatMicros(micros);
  switch (type.kind) {
    case 'date':
      return instant.slice(0, 10);
    case 'timestamp':
      return instant.slice(0, -3);
    case 'time':
      return instant.slice(11, -3);
    default:
      return instant;
  }
}

/** A unit argument: text; a constant one is checked now so the error points at it. */
function unitArg(
  e: ScalarExpr,
  kind: TimeKind,
  check: (name: string, kind: TimeKind) => string,
  pos: Pos,
  name: string,
  args: readonly ScalarExpr[],
): ScalarExpr {
  const u = e.type.kind === 'unknown' ? coerce(e, T.text, pos) : e;
  if (u.type.kind !== 'text') throw fnMismatch(name, args, pos);
  if (isConst(u) && typeof u.value === 'string') {
    try {
      check(u.value, kind);
    } catch (err) {
      throw err instanceof SluiceError ? err.at(pos) : err;
    }
  }
  return u;
}

/** A date/time argument: a string literal is read as `fallback` (PostgreSQL's unknown-literal rule). */
function timeArg(e: ScalarExpr, fallback: SqlType, pos: Pos): ScalarExpr {
  if (e.type.kind === 'unknown' || isStringLiteral(e)) return coerce(e, fallback, pos);
  return e;
}

function zoneArg(e: ScalarExpr, pos: Pos): ScalarExpr {
  const z = e.type.kind === 'unknown' ? coerce(e, T.text, pos) : e;
  if (isConst(z) && typeof z.value === 'string') {
    try {
      checkZone(z.value);
    } catch (err) {
      throw err instanceof SluiceError ? err.at(pos) : err;
    }
  }
  return z;
}

/** A date/time function call, or undefined when `name` is none of them. */
export function bindTimeFunction(
  e: Extract<Expr, { kind: 'function' }>,
  args: readonly ScalarExpr[],
): ScalarExpr | undefined {
  const name = e.name;
  const pos = e.pos;
  const n = args.length;
  if (NOW_FUNCTIONS.has(name)) {
    if (n !== 0) throw fnMismatch(name, args, pos);
    return nowConst(name, pos);
  }
  const intArg = (a: ScalarExpr): ScalarExpr => {
    if (a.type.kind === 'int') return a;
    if (a.type.kind === 'unknown' || isStringLiteral(a)) return coerce(a, T.int32, pos);
    throw fnMismatch(name, args, pos);
  };
  const doubleArg = (a: ScalarExpr): ScalarExpr => {
    if (isNumeric(a.type) || a.type.kind === 'unknown' || isStringLiteral(a))
      return coerce(a, T.float64, pos);
    throw fnMismatch(name, args, pos);
  };
  switch (name) {
    case 'extract':
    case 'date_part': {
      if (n !== 2) throw fnMismatch(name, args, pos);
      // date_part('…', '2024-01-01') reads the literal as a timestamp, as PostgreSQL does; date_part
      // has no date form in PostgreSQL, so a date is read as a timestamptz there (hour 0, not an error).
      let v = timeArg(args[1] as ScalarExpr, T.timestamp, pos);
      if (name === 'date_part' && v.type.kind === 'date') v = coerce(v, T.timestamptz, pos);
      if (!isTimeType(v.type)) throw fnMismatch(name, args, pos);
      const kind = v.type.kind as TimeKind;
      const unit = unitArg(args[0] as ScalarExpr, kind, extractUnit, (e.args[0] as Expr).pos, name, args);
      return call(name, [unit, v], name === 'extract' ? T.numeric : T.float64);
    }
    case 'date_trunc': {
      if (n < 2 || n > 3) throw fnMismatch(name, args, pos);
      let v = timeArg(args[1] as ScalarExpr, T.timestamptz, pos);
      // date_trunc(unit, date) is the timestamptz form in PostgreSQL (date → timestamptz)
      if (v.type.kind === 'date') v = coerce(v, T.timestamptz, pos);
      if (!['timestamp', 'timestamptz', 'interval'].includes(v.type.kind)) throw fnMismatch(name, args, pos);
      if (n === 3 && v.type.kind !== 'timestamptz') throw fnMismatch(name, args, pos);
      const kind = v.type.kind as TimeKind;
      const unit = unitArg(args[0] as ScalarExpr, kind, truncUnit, (e.args[0] as Expr).pos, name, args);
      const rest = n === 3 ? [zoneArg(args[2] as ScalarExpr, (e.args[2] as Expr).pos)] : [];
      return call('date_trunc', [unit, v, ...rest], v.type);
    }
    case 'timezone': {
      // `x AT TIME ZONE zone` is timezone(zone, x)
      if (n !== 2) throw fnMismatch(name, args, pos);
      const zone = zoneArg(args[0] as ScalarExpr, (e.args[0] as Expr).pos);
      let v = timeArg(args[1] as ScalarExpr, T.timestamptz, pos);
      if (v.type.kind === 'date') v = coerce(v, T.timestamptz, pos);
      if (v.type.kind === 'timestamptz') return call('timezone', [zone, v], T.timestamp);
      if (v.type.kind === 'timestamp') return call('timezone', [zone, v], T.timestamptz);
      if (v.type.kind === 'time')
        throw notSupported('AT TIME ZONE on a time', pos, 'apply it to a timestamp');
      throw fnMismatch(name, args, pos);
    }
    case 'make_interval': {
      if (n > 7) throw fnMismatch(name, args, pos);
      const filled: ScalarExpr[] = [];
      for (let i = 0; i < 7; i++) {
        const a = args[i];
        if (i < 6) filled.push(a === undefined ? { kind: 'const', value: 0, type: T.int32 } : intArg(a));
        else filled.push(a === undefined ? { kind: 'const', value: 0, type: T.float64 } : doubleArg(a));
      }
      return call('make_interval', filled, T.interval);
    }
    case 'make_date':
      if (n !== 3) throw fnMismatch(name, args, pos);
      return call('make_date', args.map(intArg), T.date);
    case 'make_time':
      if (n !== 3) throw fnMismatch(name, args, pos);
      return call(
        'make_time',
        [intArg(args[0] as ScalarExpr), intArg(args[1] as ScalarExpr), doubleArg(args[2] as ScalarExpr)],
        T.time,
      );
    case 'make_timestamp':
      if (n !== 6) throw fnMismatch(name, args, pos);
      return call(
        'make_timestamp',
        [...args.slice(0, 5).map(intArg), doubleArg(args[5] as ScalarExpr)],
        T.timestamp,
      );
    case 'age': {
      if (n === 1) {
        // age(x) is age(current_date at midnight, x): it reads the clock
        throw notSupported('age with one argument', pos, 'write age(timestamp, timestamp)');
      }
      if (n !== 2) throw fnMismatch(name, args, pos);
      const both = args.map((a) => timeArg(a, T.timestamp, pos));
      const t = both.some((a) => a.type.kind === 'timestamptz') ? T.timestamptz : T.timestamp;
      if (!both.every((a) => ['date', 'timestamp', 'timestamptz'].includes(a.type.kind)))
        throw fnMismatch(name, args, pos);
      return call(
        'age',
        both.map((a) => coerce(a, t, pos)),
        T.interval,
      );
    }
    case 'justify_hours':
    case 'justify_days':
    case 'justify_interval': {
      if (n !== 1) throw fnMismatch(name, args, pos);
      const v = timeArg(args[0] as ScalarExpr, T.interval, pos);
      if (v.type.kind !== 'interval') throw fnMismatch(name, args, pos);
      return call(name, [v], T.interval);
    }
    case 'to_char': {
      if (n !== 2) throw fnMismatch(name, args, pos);
      const v = args[0] as ScalarExpr;
      if (!isTimeType(v.type)) return undefined; // to_char of a number: not a date/time function
      // A date is formatted as a timestamp with time zone, PostgreSQL's choice (its TZ is the zone's).
      const kind = v.type.kind === 'date' ? T.timestamptz : v.type;
      const p = args[1] as ScalarExpr;
      const pattern = p.type.kind === 'unknown' ? coerce(p, T.text, pos) : p;
      if (pattern.type.kind !== 'text') throw fnMismatch(name, args, pos);
      return call('to_char', [coerce(v, kind, pos), pattern], T.text);
    }
    case 'to_timestamp': {
      if (n === 1) return call('to_timestamp', [doubleArg(args[0] as ScalarExpr)], T.timestamptz);
      if (n !== 2) throw fnMismatch(name, args, pos);
      const texts = args.map((a) => (a.type.kind === 'unknown' ? coerce(a, T.text, pos) : a));
      if (!texts.every((a) => a.type.kind === 'text')) throw fnMismatch(name, args, pos);
      return call('to_timestamp', texts, T.timestamptz);
    }
    default:
      return undefined;
  }
}

/**
 * NOW() and the other clock functions in a materialized view outside a temporal filter (which
 * bind-temporal.ts takes out of WHERE first): refused, because anything else reading the clock
 * would change the view without an epoch saying so.
 */
export function refuseNowInView(root: SelectStmt): void {
  const queries: SelectStmt[] = [root];
  for (let query = queries.pop(); query !== undefined; query = queries.pop()) {
    if (query.setOp !== undefined) queries.push(query.setOp.right, query.setOp.left);
    for (const cte of query.with ?? []) queries.push(cte.query);
    const roots: Expr[] = [...query.groupBy, ...query.orderBy.map((o) => o.expr)];
    for (const item of query.items) if (item.kind === 'expr') roots.push(item.expr);
    for (const x of [query.where, query.having, query.limit, query.offset, ...(query.distinctOn ?? [])])
      if (x !== undefined) roots.push(x);
    const from: FromItem[] = query.from !== undefined ? [query.from] : [];
    for (let item = from.pop(); item !== undefined; item = from.pop()) {
      if (item.kind === 'join') {
        from.push(item.right, item.left);
        if (item.on !== undefined) roots.push(item.on);
      } else if (item.kind === 'subquery') queries.push(item.query);
      else if (item.kind === 'windowTvf') {
        from.push(item.source);
        roots.push(...item.args);
      } else if (item.kind === 'unnest') roots.push(...item.args);
      else if (item.kind === 'values') for (const row of item.rows) roots.push(...row);
    }
    for (let e = roots.pop(); e !== undefined; e = roots.pop()) {
      if (e.kind === 'function' && NOW_FUNCTIONS.has(e.name)) {
        const niladic = e.name.startsWith('current_') || e.name.startsWith('local');
        throw notSupported(
          `${e.name.toUpperCase()}${niladic ? '' : '()'} in a materialized view`,
          e.pos,
          TEMPORAL_HINT,
        );
      }
      if (e.kind === 'function' && e.name === 'gen_random_uuid') {
        throw notSupported(
          'GEN_RANDOM_UUID() in a materialized view',
          e.pos,
          'a view must be deterministic: generate the uuid where the row is produced and store it in a column, or call it in an ad-hoc query',
        );
      }
      if (e.kind === 'subquery' || e.kind === 'exists') queries.push(e.query);
      if (e.kind === 'function' && e.over !== undefined) {
        roots.push(...e.over.partitionBy, ...e.over.orderBy.map((o) => o.expr));
      }
      roots.push(...exprChildren(e));
    }
  }
}
