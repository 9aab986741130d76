// Random short strings over characters on both sides of every boundary text order cares about (the
// ASCII/BMP ones, U+D7FF / U+E000–U+FFFF, and characters above U+FFFF): where code unit and code
// point order disagree. A linear congruential generator, so a seed replays.

/** Characters on both sides of every boundary the order cares about. */
export const BOUNDARY_CHARS: readonly string[] = [
  'a',
  'z',
  'é',
  '\u07ff',
  '\u0800',
  '\ud7ff',
  '\ue000',
  '\uff21',
  '\ufffd',
  '\uffff',
  '\u{10000}',
  '\u{1f600}',
  '\u{1f601}',
  '\u{20000}',
  '\u{10ffff}',
];

/** A string of 0–4 of those characters; advances `seed`. */
export function randomBoundaryText(seed: { s: number }): string {
  let out = '';
  const n = (seed.s = (Math.imul(seed.s, 1103515245) + 12345) & 0x7fffffff) % 5;
  for (let i = 0; i < n; i++) {
    seed.s = (Math.imul(seed.s, 1103515245) + 12345) & 0x7fffffff;
    out += BOUNDARY_CHARS[seed.s % BOUNDARY_CHARS.length] as string;
  }
  return out;
}
