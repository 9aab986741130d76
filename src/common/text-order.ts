// Text order: by code point, the order of SQLite's BINARY collation (memcmp over UTF-8) and of
// PostgreSQL's C collation. JavaScript's `<` on strings compares UTF-16 code units, which is the same
// order except where one side has a surrogate (a character above U+FFFF) and the other a unit in
// U+E000–U+FFFF at the first difference: by units the surrogate sorts first, by code point last.

/** A UTF-16 surrogate: half of a character above U+FFFF. */
const SURROGATE = /[\ud800-\udfff]/;

/** Whether a string holds a surrogate: a character above U+FFFF, where `<` is not code point order. */
export function holdsSurrogate(s: string): boolean {
  return SURROGATE.test(s);
}

/**
 * Code point order of two strings: -1, 0 or 1. JavaScript's `<` decides, unless the string it puts
 * first holds a surrogate: only then can the first difference be a surrogate against U+E000–U+FFFF,
 * where code unit and code point order disagree, and the strings are walked (compareTextByUnits).
 * ASCII and BMP text pay one failed regular-expression test, no walk (a micro-bench:
 * bench/text-order.ts).
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const c = a < b ? -1 : 1;
  return SURROGATE.test(c < 0 ? a : b) ? compareTextByUnits(a, b) : c;
}

/** compareText by a walk over the common prefix: the first differing units decide. */
export function compareTextByUnits(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x >= 0xd800 && y >= 0xd800) return codePointUnit(x) < codePointUnit(y) ? -1 : 1;
  return x < y ? -1 : 1;
}

/**
 * A code unit ≥ 0xD800 moved so that unit order is code point order: surrogates (0xD800–0xDFFF) to
 * 0xF800–0xFFFF, the units above them (0xE000–0xFFFF) to 0xD800–0xF7FF. Units below 0xD800 stay.
 * At a first difference two surrogates are both high or both low (the text is well-formed), and their
 * own order is already the order of the code points they start.
 */
export function codePointUnit(unit: number): number {
  return unit < 0xd800 ? unit : unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
