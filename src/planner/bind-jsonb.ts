// Binding of the jsonb operators (-> ->> #> #>> @> <@ ?) and functions (jsonb_extract_path(_text),
// jsonb_typeof, jsonb_array_length) with PostgreSQL's operand types: a string literal on the right
// of @> is jsonb, of #> a text[] path literal ('{a,b,0}', checked here so its error has a position).
import { SluiceError } from '../common/errors.ts';
import { parseTextArray } from '../common/json/jsonb-ops.ts';
import type { ScalarExpr } from '../common/scalar-expr.ts';
import { T, typeName } from '../common/types.ts';
import type { Expr, Pos } from '../parser/ast.ts';
import { call, coerce, isConst, isStringLiteral, unpadChar } from './bind-coerce.ts';

export type JsonbOp = '->' | '->>' | '#>' | '#>>' | '#-' | '@>' | '<@' | '?';

export function isJsonbOp(op: string): op is JsonbOp {
  return (
    op === '->' ||
    op === '->>' ||
    op === '#>' ||
    op === '#>>' ||
    op === '#-' ||
    op === '@>' ||
    op === '<@' ||
    op === '?'
  );
}

function noOperator(op: string, l: ScalarExpr, r: ScalarExpr, pos: Pos): SluiceError {
  return new SluiceError(
    'TYPE_MISMATCH',
    `operator does not exist: ${typeName(l.type)} ${op} ${typeName(r.type)}`,
    {
      position: pos,
      hint: 'no operator matches the given name and argument types; you might need to add explicit type casts',
    },
  );
}

/** A jsonb operand: jsonb itself, or a string literal read as jsonb. */
function jsonbOperand(e: ScalarExpr, pos: Pos): ScalarExpr | undefined {
  if (e.type.kind === 'jsonb') return e;
  if (e.type.kind === 'unknown' || isStringLiteral(e)) return coerce(e, T.jsonb, pos);
  return undefined;
}

/** A text operand (a key, a path): text of any length, or an untyped NULL. */
function textOperand(e: ScalarExpr, pos: Pos): ScalarExpr | undefined {
  if (e.type.kind === 'text') return unpadChar(e);
  if (e.type.kind === 'unknown') return coerce(e, T.text, pos);
  return undefined;
}

/** The path of #> / #>> / #- / jsonb_set: a text[] literal, refused at its position when it is not one. */
function pathOperand(e: ScalarExpr, pos: Pos, what = '#> or #>>'): ScalarExpr | undefined {
  const t = textOperand(e, pos);
  if (t === undefined) return undefined;
  if (isConst(t) && typeof t.value === 'string') {
    try {
      parseTextArray(t.value);
    } catch (err) {
      throw err instanceof SluiceError ? err.at(pos) : err;
    }
  } else if (!isConst(t)) {
    throw new SluiceError('NOT_SUPPORTED', `a path of ${what} that is not a constant is not supported`, {
      position: pos,
      hint: "write the path as a literal such as '{a,b,0}', or use jsonb_extract_path_text(x, a, b)",
    });
  }
  return t;
}

export function bindJsonbOperator(
  op: JsonbOp,
  left: ScalarExpr,
  right: ScalarExpr,
  pos: Pos,
  rightPos: Pos,
): ScalarExpr {
  const l = jsonbOperand(left, pos);
  if (l === undefined || (op !== '@>' && op !== '<@' && l.type.kind !== 'jsonb'))
    throw noOperator(op, left, right, pos);
  switch (op) {
    case '->':
    case '->>': {
      const r = right.type.kind === 'int' ? right : textOperand(right, rightPos);
      if (r === undefined) throw noOperator(op, left, right, pos);
      return call(op === '->' ? 'jsonb_get' : 'jsonb_get_text', [l, r], op === '->' ? T.jsonb : T.text);
    }
    case '#>':
    case '#>>': {
      const r = pathOperand(right, rightPos);
      if (r === undefined) throw noOperator(op, left, right, pos);
      return call(op === '#>' ? 'jsonb_path' : 'jsonb_path_text', [l, r], op === '#>' ? T.jsonb : T.text);
    }
    case '#-': {
      const r = pathOperand(right, rightPos, '#-');
      if (r === undefined) throw noOperator(op, left, right, pos);
      return call('jsonb_delete_path', [l, r], T.jsonb);
    }
    case '@>':
    case '<@': {
      const r = jsonbOperand(right, rightPos);
      if (r === undefined || (l.type.kind !== 'jsonb' && r.type.kind !== 'jsonb'))
        throw noOperator(op, left, right, pos);
      return call('jsonb_contains', op === '@>' ? [l, r] : [r, l], T.bool);
    }
    case '?': {
      const r = textOperand(right, rightPos);
      if (r === undefined) throw noOperator(op, left, right, pos);
      return call('jsonb_exists', [l, r], T.bool);
    }
  }
}

/**
 * `jsonb || jsonb` (a string literal on either side is jsonb), `jsonb - text` and `jsonb - integer`;
 * undefined when neither side is jsonb. Other mixes with jsonb (`jsonb || text` column, which
 * PostgreSQL reads as text concatenation, `jsonb - text[]`) are NOT_SUPPORTED.
 */
export function bindJsonbEditOperator(
  op: string,
  left: ScalarExpr,
  right: ScalarExpr,
  pos: Pos,
): ScalarExpr | undefined {
  if ((op !== '||' && op !== '-') || (left.type.kind !== 'jsonb' && right.type.kind !== 'jsonb'))
    return undefined;
  const literal = (a: ScalarExpr): boolean => a.type.kind === 'unknown' || isStringLiteral(a);
  if (op === '||') {
    const l = left.type.kind === 'jsonb' || literal(left) ? jsonbOperand(left, pos) : undefined;
    const r = right.type.kind === 'jsonb' || literal(right) ? jsonbOperand(right, pos) : undefined;
    if (l !== undefined && r !== undefined) return call('jsonb_concat', [l, r], T.jsonb);
  } else if (left.type.kind === 'jsonb') {
    if (right.type.kind === 'int') return call('jsonb_delete_index', [left, right], T.jsonb);
    if (right.type.kind === 'text' || right.type.kind === 'unknown') {
      return call('jsonb_delete_key', [left, coerce(unpadChar(right), T.text, pos)], T.jsonb);
    }
  }
  throw new SluiceError(
    'NOT_SUPPORTED',
    `operator ${typeName(left.type)} ${op} ${typeName(right.type)} is not supported`,
    { position: pos },
  );
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

/** The jsonb functions, or undefined when `e` names none of them. */
export function bindJsonbFunction(
  e: Extract<Expr, { kind: 'function' }>,
  args: readonly ScalarExpr[],
): ScalarExpr | undefined {
  const name = e.name.replace(/^json_/, 'jsonb_'); // json is jsonb in Sluice
  switch (name) {
    case 'jsonb_set': {
      // jsonb_set(target, path, new_value [, create_if_missing]), strict like PostgreSQL's
      if (args.length < 3 || args.length > 4) throw fnMismatch(e.name, args, e.pos);
      const target = jsonbOperand(args[0] as ScalarExpr, e.pos);
      const path = pathOperand(args[1] as ScalarExpr, (e.args[1] as Expr).pos, 'jsonb_set');
      const value = jsonbOperand(args[2] as ScalarExpr, e.pos);
      const create = args[3];
      if (
        target === undefined ||
        path === undefined ||
        value === undefined ||
        (create !== undefined && create.type.kind !== 'bool' && create.type.kind !== 'unknown')
      ) {
        throw fnMismatch(e.name, args, e.pos);
      }
      const c = create === undefined ? [] : [coerce(create, T.bool, e.pos)];
      return call('jsonb_set', [target, path, value, ...c], T.jsonb);
    }
    case 'jsonb_strip_nulls': {
      const j = args.length === 1 ? jsonbOperand(args[0] as ScalarExpr, e.pos) : undefined;
      if (j === undefined) throw fnMismatch(e.name, args, e.pos);
      return call('jsonb_strip_nulls', [j], T.jsonb);
    }
    case 'jsonb_typeof':
    case 'jsonb_array_length': {
      const j = args.length === 1 ? jsonbOperand(args[0] as ScalarExpr, e.pos) : undefined;
      if (j === undefined) throw fnMismatch(e.name, args, e.pos);
      return call(name, [j], name === 'jsonb_typeof' ? T.text : T.int32);
    }
    case 'jsonb_extract_path':
    case 'jsonb_extract_path_text': {
      const j = args.length >= 1 ? jsonbOperand(args[0] as ScalarExpr, e.pos) : undefined;
      const path = args.slice(1).map((a) => textOperand(a, e.pos));
      if (j === undefined || path.some((p) => p === undefined)) throw fnMismatch(e.name, args, e.pos);
      return call(name, [j, ...(path as ScalarExpr[])], name === 'jsonb_extract_path' ? T.jsonb : T.text);
    }
    default:
      // PostgreSQL's other JSON functions are valid SQL Sluice does not have yet
      if (/^(jsonb?_|to_jsonb?$|row_to_json$|array_to_json$)/.test(e.name)) {
        throw new SluiceError('NOT_SUPPORTED', `function ${e.name} is not supported`, {
          position: e.pos,
          hint: 'supported: -> ->> #> #>> #- @> <@ ? || -, jsonb_extract_path(_text), jsonb_typeof, jsonb_array_length, jsonb_set, jsonb_strip_nulls, jsonb_build_array, jsonb_build_object, to_jsonb, jsonb_agg, jsonb_object_agg',
        });
      }
      return undefined;
  }
}
