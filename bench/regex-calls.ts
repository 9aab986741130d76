// In-process: the SQL regular expression functions' engine calls (src/common/functions/regex.ts) on
// long texts — counts, replacements and the n-th match with a million matches, and a pattern
// without a literal prefix that never matches. Two checkouts' regex.ts are timed in alternating
// rounds in one process (CPU ms per call, median of rounds; the order of the two alternates).
//   node --import tsx bench/regex-calls.ts [--base PATH_TO/regex.ts] [--this PATH] [--rounds 5]
//     [--chars 1000000] [--only shape,shape]
// (`--this` the base's path as well: an A/A of the tool.)
import { forEachFlag, intArg, listArg } from './bench-args.ts';

let thisPath = new URL('../src/common/functions/regex.ts', import.meta.url).pathname;
let basePath: string | undefined;
let rounds = 5;
let chars = 1_000_000;
let only: string[] | undefined;
forEachFlag(process.argv.slice(2), (flag, value) => {
  if (flag === '--this') thisPath = value();
  else if (flag === '--base') basePath = value();
  else if (flag === '--rounds') rounds = Math.max(1, intArg(flag, value()));
  else if (flag === '--chars') chars = Math.max(1, intArg(flag, value()));
  else if (flag === '--only') only = listArg(value());
  else
    throw new Error(
      `bench: unknown option ${flag} (--base PATH, --this PATH, --rounds N, --chars N, --only LIST)`,
    );
});
type RegexModule = typeof import('../src/common/functions/regex.ts');
const trees: [string, RegexModule][] = [['this', (await import(thisPath)) as RegexModule]];
if (basePath !== undefined) trees.push(['base', (await import(basePath)) as RegexModule]);

const as = 'a'.repeat(chars);
const abs = 'ab'.repeat(chars / 2);
const words = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(chars / 27)).slice(0, chars);
const shapes: Record<string, (m: RegexModule) => unknown> = {
  /** regexp_count(s, 'a'): one match per character */
  'count-a': (m) => m.compileRegex('a', false).count(as, 0),
  /** regexp_count(s, '[ab]'): no literal prefix */
  'count-class': (m) => m.compileRegex('[ab]', false).count(abs, 0),
  /** regexp_count(s, 'x*'): an empty match at every place */
  'count-empty': (m) => m.compileRegex('x*', false).count(as, 0),
  /** regexp_count(s, '\w+'): a match per word */
  'count-words': (m) => m.compileRegex('\\w+', false).count(words, 0),
  /** regexp_like(s, '(a|b)(c|d)'): no match, a pattern without a literal prefix */
  'like-none': (m) => m.compileRegex('(a|b)(c|d)', false).test(abs),
  /** regexp_replace(s, 'a', 'b', 'g') */
  'replace-a': (m) => m.compileRegex('a', false).replace(as, 'b', true).length,
  /** regexp_replace(s, '(a)(b)', '\2\1', 'g') */
  'replace-groups': (m) => m.compileRegex('(a)(b)', false).replace(abs, '\\2\\1', true).length,
  /** regexp_replace(s, '\w+', '<\&>', 'g') */
  'replace-words': (m) => m.compileRegex('\\w+', false).replace(words, '<\\&>', true).length,
  /** regexp_substr(s, '(a)', 1, <last>, 'c', 1): the n-th match's group */
  'nth-last': (m) => m.compileRegex('(a)', false).nth(as, 0, chars)?.groups[0],
};

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const names = Object.keys(shapes).filter((n) => only === undefined || only.includes(n));
const times = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? trees : [...trees].reverse();
  for (const name of names) {
    const shape = shapes[name] as (m: RegexModule) => unknown;
    const answers: unknown[] = [];
    for (const [tree, m] of order) {
      const t0 = cpuMs();
      answers.push(shape(m));
      const key = `${name}\t${tree}`;
      times.set(key, [...(times.get(key) ?? []), cpuMs() - t0]);
    }
    if (answers.some((a) => a !== answers[0])) throw new Error(`${name}: the trees answer differently`);
  }
}
const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(`chars ${chars}, rounds ${rounds}; CPU ms per call, median`);
console.log(['shape', ...trees.map(([t]) => t), ...(trees.length > 1 ? ['this/base'] : [])].join('\t'));
for (const name of names) {
  const ms = trees.map(([t]) => median(times.get(`${name}\t${t}`) ?? []));
  const ratio = ms.length > 1 ? [((ms[0] as number) / (ms[1] as number)).toFixed(2)] : [];
  console.log([name, ...ms.map((x) => x.toFixed(0)), ...ratio].join('\t'));
}
