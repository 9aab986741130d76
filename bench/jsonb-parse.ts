// In-process: text → jsonb (`parseJsonb`, what a `::jsonb` cast runs) and an ingested JSON value →
// jsonb (`jsonbFromParsed`, what a REST or Kafka row's jsonb column runs), over the shapes that held
// the event loop: a long array of numbers, many small objects, deep nesting, long strings. Two
// checkouts' src/common/json/jsonb.ts are timed in alternating rounds in one process (CPU ms per
// conversion, median of rounds; the first checkout alternates each round).
//   node --import tsx bench/jsonb-parse.ts [--base DIR] [--this DIR] [--rounds 9] [--scale 1]
// (`--this` the base's directory as well: an A/A of the tool.) `--scale` multiplies every shape's size.
import { forEachFlag, intArg } from './bench-args.ts';

let thisDir = new URL('..', import.meta.url).pathname;
let baseDir: string | undefined;
let rounds = 9;
let scale = 1;
forEachFlag(process.argv.slice(2), (flag, value) => {
  if (flag === '--this') thisDir = value();
  else if (flag === '--base') baseDir = value();
  else if (flag === '--rounds') rounds = Math.max(1, intArg(flag, value()));
  else if (flag === '--scale') scale = Math.max(1, intArg(flag, value()));
  else throw new Error(`bench: unknown option ${flag} (--base DIR, --this DIR, --rounds N, --scale N)`);
});
type JsonbModule = typeof import('../src/common/json/jsonb.ts');
const load = async (dir: string): Promise<JsonbModule> =>
  (await import(`${dir.replace(/\/$/, '')}/src/common/json/jsonb.ts`)) as JsonbModule;
const modules: [string, JsonbModule][] = [['this', await load(thisDir)]];
if (baseDir !== undefined) modules.push(['base', await load(baseDir)]);

const n = 200_000 * scale;
const texts: [string, string][] = [
  // the attack's shape: ('[' || repeat('1,', n - 1) || '1]')::jsonb
  ['ints', `[${'1,'.repeat(n - 1)}1]`],
  ['decimals', `[${Array.from({ length: n }, (_, i) => `${i}.${i % 100}`).join(', ')}]`],
  [
    'objects',
    `[${Array.from({ length: n / 4 }, (_, i) => `{"id": ${i}, "name": "n${i}", "ok": true, "tags": ["a", null]}`).join(',')}]`,
  ],
  // objects and arrays 100 levels deep, side by side
  [
    'nested',
    `[${Array(n / 200)
      .fill(`${'{"a": ['.repeat(50)}1${']}'.repeat(50)}`)
      .join(',')}]`,
  ],
  ['strings', `[${Array.from({ length: n / 2 }, (_, i) => `"s${i}\\n"`).join(',')}]`],
];
const parsed: [string, unknown][] = [
  ['ints', Array.from({ length: n }, (_, i) => i)],
  [
    'objects',
    Array.from({ length: n / 4 }, (_, i) => ({ id: i, name: `n${i}`, ok: true, tags: ['a', null] })),
  ],
];

const times = new Map<string, number[]>();
const record = (key: string, ms: number): void => {
  const list = times.get(key) ?? [];
  list.push(ms);
  times.set(key, list);
};
let sink = 0;
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? modules : [...modules].reverse();
  for (const [name, m] of order) {
    for (const [shape, text] of texts) {
      const t0 = process.cpuUsage();
      sink += m.parseJsonb(text).text.length;
      const t = process.cpuUsage(t0);
      record(`${name} parseJsonb ${shape}`, (t.user + t.system) / 1000);
    }
    for (const [shape, value] of parsed) {
      const t0 = process.cpuUsage();
      sink += m.jsonbFromParsed(value)?.text.length ?? 0;
      const t = process.cpuUsage(t0);
      record(`${name} jsonbFromParsed ${shape}`, (t.user + t.system) / 1000);
    }
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
console.log(`elements per shape ≈ ${n}; rounds ${rounds}; CPU ms per conversion, median (min–max)`);
for (const [key, list] of times) {
  const lo = Math.min(...list).toFixed(1);
  const hi = Math.max(...list).toFixed(1);
  console.log(`${key.padEnd(36)} ${median(list).toFixed(1).padStart(8)}  (${lo}–${hi})`);
}
if (sink === 0) console.log('(nothing converted)');
