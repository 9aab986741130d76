// PostgreSQL's format(fmt, args…) and quote_literal / quote_nullable: `%s` an argument's text (NULL as
// nothing), `%L` it as an SQL literal (NULL unquoted), `%%` a percent sign; `%n$` takes the n-th
// argument (the next unnumbered one continues after it), a width (`%10s`, `%-10s`, `%*s`, `%*n$s`)
// pads with spaces, `%I` quotes an identifier as quote_ident does (with PostgreSQL 15's key words).
import { SluiceError } from '../errors.ts';
import { PG15_KEYWORDS } from './pg-keywords.ts';
import { checkLength } from './text.ts';
import { charLength } from '../values.ts';

/** quote_literal: the text between single quotes, quotes doubled; with a backslash, E'…' doubling it. */
export function quoteLiteral(s: string): string {
  const quoted = s.replaceAll("'", "''");
  return s.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * quote_ident, as PostgreSQL 15's quote_identifier: the name as it is when it is lowercase ASCII
 * letters, digits and underscores (not starting with a digit) and no key word but an unreserved one;
 * else between double quotes, quotes doubled.
 */
export function quoteIdent(s: string): string {
  let safe = s.length > 0 && /^[a-z_][a-z0-9_]*$/.test(s);
  if (safe) {
    const category = PG15_KEYWORDS.get(s);
    safe = category === undefined || category === 'unreserved';
  }
  return safe ? s : `"${s.replaceAll('"', '""')}"`;
}

function invalid(message: string, hint?: string): SluiceError {
  return new SluiceError('INVALID_VALUE', message, hint !== undefined ? { hint } : {});
}

/**
 * format(fmt, …): `args` are the arguments' texts (null for NULL), as PostgreSQL writes each
 * argument's type. Throws INVALID_VALUE for a malformed or unsupported specifier and for too few
 * arguments.
 */
export function formatText(fmt: string, args: readonly (string | null)[]): string {
  let out = '';
  let next = 0;
  const argAt = (n: number): string | null => {
    if (n >= args.length) throw invalid('too few arguments for format()');
    return args[n] as string | null;
  };
  /** `digits$` at i: the 0-based argument number and the index after `$`, or null. */
  const position = (i: number): [number, number] | null => {
    let j = i;
    while (j < fmt.length && fmt.charCodeAt(j) >= 48 && fmt.charCodeAt(j) <= 57) j++;
    if (j === i || fmt[j] !== '$') return null;
    const n = Number(fmt.slice(i, j));
    if (n < 1) throw invalid('format specifies argument 0, but arguments are numbered from 1');
    return [n - 1, j + 1];
  };
  for (let i = 0; i < fmt.length;) {
    const pct = fmt.indexOf('%', i);
    if (pct < 0) {
      out += fmt.slice(i);
      break;
    }
    out += fmt.slice(i, pct);
    let p = pct + 1;
    if (p >= fmt.length) throw invalid('unterminated format() type specifier', 'For a single "%" use "%%".');
    if (fmt[p] === '%') {
      out += '%';
      i = p + 1;
      continue;
    }
    let argNo: number | null = null;
    const pos = position(p);
    if (pos !== null) [argNo, p] = pos;
    let left = false;
    if (fmt[p] === '-') {
      left = true;
      p++;
    }
    let width = 0;
    if (fmt[p] === '*') {
      p++;
      const starPos = position(p);
      let w: string | null;
      if (starPos !== null) {
        w = argAt(starPos[0]);
        p = starPos[1];
        next = starPos[0] + 1;
      } else w = argAt(next++);
      const n = w === null ? 0 : Number(w);
      if (!Number.isInteger(n)) throw invalid('format() width argument must be of type integer');
      if (n < 0) left = true;
      width = Math.abs(n);
    } else {
      let j = p;
      while (j < fmt.length && fmt.charCodeAt(j) >= 48 && fmt.charCodeAt(j) <= 57) j++;
      width = j > p ? Number(fmt.slice(p, j)) : 0;
      p = j;
    }
    if (p >= fmt.length) throw invalid('unterminated format() type specifier', 'For a single "%" use "%%".');
    const type = fmt[p] as string;
    if (type !== 's' && type !== 'L' && type !== 'I') {
      throw invalid(`unrecognized format() type specifier "${type}"`, 'For a single "%" use "%%".');
    }
    const index = argNo ?? next;
    const value = argAt(index);
    next = index + 1;
    if (type === 'I' && value === null) {
      throw invalid('null values cannot be formatted as an SQL identifier');
    }
    let piece =
      type === 'L'
        ? value === null
          ? 'NULL'
          : quoteLiteral(value)
        : type === 'I'
          ? quoteIdent(value as string)
          : (value ?? '');
    if (width > 0) {
      checkLength(width);
      const length = charLength(piece);
      if (length < width)
        piece = left ? piece + ' '.repeat(width - length) : ' '.repeat(width - length) + piece;
    }
    out += piece;
    checkLength(out.length);
    i = p + 1;
  }
  return out;
}
