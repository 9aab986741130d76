// A dataflow plan's fingerprint: the hash of its print, salted where a version changed what a plan
// of that shape computes. A checkpoint stores each view's fingerprint; a view whose fingerprint
// differs when the checkpoint loads is rebuilt from its inputs, not loaded (engine-checkpoints.ts),
// so state computed under the old rules never meets a retraction computed under the new ones.
import { createHash } from 'node:crypto';
import type { SqlType } from '../common/types.ts';
import type { DataflowNode } from './dataflow-plan.ts';

/** The fingerprint of a plan printed without execution details (`printDataflow`, kernels off). */
export function planFingerprint(printed: string, facts: PlanFacts = {}): string {
  // Numerics became exact decimals (they were doubles): a plan that carries one gets a new
  // fingerprint, so its checkpointed state (holding doubles) is rebuilt from its inputs, not loaded.
  let salt = printed.includes(':numeric') ? 'exact numeric\n' : '';
  // Rows became keyed by their exact text (1.5 and 1.50 two rows; exact-rows.ts): a plan that may
  // carry such values gets a new fingerprint, so state stored under the old entry ids (and holding
  // one text for equal rows) is rebuilt from its inputs, not loaded.
  if (INEXACT_TYPES.test(printed)) salt += 'exact rows\n';
  // A double cast to an integer now rounds a tie to even (it rounded away from zero): a plan that
  // may hold one is rebuilt from its inputs once, so a retraction meets the group its insert made.
  if (FLOAT_TYPES.test(printed) && INTEGER_CAST.test(printed)) salt += 'float to integer rint\n';
  // A float's text became PostgreSQL's (1e+20, -0), and jsonb input refuses \u0000 and unpaired
  // surrogate escapes: a plan that may write one or parse text as jsonb is rebuilt from its inputs
  // once, so a retraction computes the text its insert did.
  if (FLOAT_TYPES.test(printed) && VALUE_AS_TEXT.test(printed)) salt += 'float text\n';
  if (printed.includes(' as jsonb)')) salt += 'jsonb input escapes\n';
  // A real's + - * / became single precision (0.1::real + 0.2::real was 0.30000000000000004): a
  // plan that may compute one is rebuilt from its inputs once, so a retraction meets its insert's value.
  if (REAL_TYPE.test(printed) && REAL_ARITHMETIC.test(printed)) salt += 'real arithmetic\n';
  // An interval times or divided by a number cascades as PostgreSQL's interval_mul/interval_div
  // ('1 month' / 7 was 4 days 06:51:25.714286), and to_char writes a negative interval's fields
  // and a timestamp's MS/US/OF as PostgreSQL does: a plan that may compute one is rebuilt once.
  if (INTERVAL_SCALING_OR_TO_CHAR.test(printed)) salt += 'interval scaling and to_char\n';
  // char(n) drops only trailing spaces as text (a tab or newline it ends with was dropped too), and
  // LIKE, IN, NULLIF and COALESCE read it as PostgreSQL does: a plan over one is rebuilt once.
  if (printed.includes('character(')) salt += 'char padding\n';
  // sign(NaN) of a float became 0, as PostgreSQL's (it was NaN): a plan that may compute one is
  // rebuilt once.
  if (FLOAT_TYPES.test(printed) && /\bsign\(/.test(printed)) salt += 'float sign of NaN\n';
  // A group keyed by a float shows -0 while one of its rows holds -0, else 0 (it kept the sign of
  // the row that made it, also after that row left), and its checkpoint holds the zero group's -0
  // count (one float key) or its key texts (several keys): rebuilt once.
  if (facts.floatGroupKeys === true) salt += 'float group key sign\n';
  // Text orders by code point (it ordered by UTF-16 code unit: a character above U+FFFF sorted before
  // U+E000–U+FFFF): a plan that orders text (plan-orders-text.ts) is rebuilt once, so its state
  // meets the new order.
  if (facts.ordersText === true) salt += 'text code point order\n';
  // char(n) beside a varchar(n) compares without either's padding, and an IN list beside char(n) is
  // typed item by item, as PostgreSQL does: a plan over char(n) is rebuilt once more.
  if (printed.includes('character(')) salt += 'char beside varchar, IN lists\n';
  // COALESCE, CASE, GREATEST and LEAST whose first typed argument is char(n) are char (bpchar) as
  // PostgreSQL resolves them (a char(n) keeps its padding beside text, GREATEST compares without
  // trailing spaces), and NULLIF of char(n) and char(m) keeps the padding: a plan over char(n) is
  // rebuilt once more.
  if (printed.includes('character(')) salt += 'char first in COALESCE, CASE, GREATEST, LEAST\n';
  // A float SUM of -0 inputs only is -0, as PostgreSQL's (it was 0), and the group's state counts
  // its -0 inputs: a plan that may sum floats is rebuilt once, so the count covers every input.
  if (FLOAT_TYPES.test(printed) && /\bsum\(/.test(printed)) salt += 'float sum of -0\n';
  // LIKE with a pattern ending in a lone escape matched that escape as a backslash; it is now
  // PostgreSQL's row error (or false): a plan that may match one (plan-like-patterns.ts) is rebuilt once.
  if (facts.likeEndingInEscape === true) salt += 'like pattern ending in escape\n';
  // GROUP BY, DISTINCT (also an aggregate's), the set operations and PARTITION BY hold a char value in
  // one spelling (char(n) padded, bpchar without trailing spaces: 'ab   ' and 'ab  ' one group, as in
  // PostgreSQL), and a set operation whose first branch is char is char (bpchar beside text): a plan
  // that groups, matches or unites char values (charKeys) is rebuilt once, so a retraction meets the
  // row its insert made.
  if (facts.charKeys === true) salt += 'char group keys, set operations\n';
  return createHash('sha256')
    .update(salt + printed)
    .digest('hex')
    .slice(0, 16);
}

/** What the print does not say plainly, found on the plan's nodes. */
export interface PlanFacts {
  /** A Reduce groups by a float column. */
  readonly floatGroupKeys?: boolean;
  /** Some node orders text values (plan-orders-text.ts). */
  readonly ordersText?: boolean;
  /** Some LIKE / ILIKE may have a pattern ending in a lone escape (plan-like-patterns.ts). */
  readonly likeEndingInEscape?: boolean;
  /** Some node keys, matches or unites char values (charKeys). */
  readonly charKeys?: boolean;
}

/**
 * Whether some node keys, matches or unites char (bpchar) values — a Reduce's group key or DISTINCT
 * aggregate argument, a Distinct's, a set operation's or a Union's column, a window's partition key:
 * PlanFacts.charKeys.
 */
export function charKeys(nodes: readonly DataflowNode[]): boolean {
  const isChar = (t: SqlType | null | undefined): boolean =>
    t !== null && t !== undefined && t.kind === 'text' && t.fixed === true;
  return nodes.some((n) => {
    switch (n.kind) {
      case 'reduce':
        return (
          n.columns.slice(0, n.keyCount).some((c) => isChar(c.type)) ||
          n.aggregates.some((a) => a.distinct && isChar(a.argType))
        );
      case 'window':
        return n.partitionBy.some((i) => isChar(n.columns[i]?.type));
      case 'distinct':
      case 'setop':
      case 'union':
        return n.columns.some((c) => isChar(c.type));
      default:
        return false;
    }
  });
}

/** Types with equal values of other texts (1.5, 1.50; -0, 0; '1 day', '24:00:00'; arrays of them). */
const INEXACT_TYPES = /numeric|double precision|real|interval|jsonb|\[\]/;
const FLOAT_TYPES = /double precision|real/;
const INTEGER_CAST = / as (?:smallint|integer|bigint)\)/;
const REAL_TYPE = /\breal\b/;
const REAL_ARITHMETIC = /\b(?:add|sub|mul|div)\(/;
const INTERVAL_SCALING_OR_TO_CHAR = /\b(?:time_mul|time_div|to_char)\(/;
const VALUE_AS_TEXT = / as (?:text|character)|\b(?:concat|concat_args|concat_ws|array_to_string)\(/;
