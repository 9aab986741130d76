// Text order's cost: sorting text the way a view or an ad-hoc ORDER BY does (compareValues, and
// compareRows over [text, integer] rows as Top-N and ORDER BY do), with two checkouts' modules in one
// process, alternating rounds; `--aa` loads the base twice (a second module instance) to show the
// spread. CPU ms per sort, median of the rounds, per text shape: short ASCII keys, ASCII with a long
// common prefix, BMP text (accents and CJK), and text with characters above U+FFFF.
// `--engine` instead runs each checkout's Engine over ASCII text, batch by batch alternately: views
// ordering text (ROW_NUMBER per group, MIN/MAX, a `<` filter) fed `--rows` rows, then ad-hoc
// `ORDER BY s` SELECTs; CPU ms per side and phase, summed over the rounds.
//
//   node --import tsx bench/text-order.ts --base ../sluice-base [--aa] [--rounds 15]
//   node --import tsx bench/text-order.ts --base ../sluice-base --engine [--aa] [--rounds 3] [--rows 200000]
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { forEachFlag, intArg } from './bench-args.ts';

type Compare = (a: unknown, b: unknown) => number;
type RowCompare = (a: readonly unknown[], b: readonly unknown[]) => number;
interface Modules {
  readonly compareValues: Compare;
  readonly compareRows: RowCompare;
}

let baseRoot: string | null = null;
let aa = false;
let rounds = 15;
let engine = false;
let engineRows = 200_000;
forEachFlag(process.argv.slice(2), (flag, value) => {
  if (flag === '--base') baseRoot = value();
  else if (flag === '--aa') aa = true;
  else if (flag === '--rounds') rounds = intArg(flag, value());
  else if (flag === '--engine') engine = true;
  else if (flag === '--rows') engineRows = intArg(flag, value());
  else throw new Error(`bench: unknown option ${flag} (--base, --aa, --rounds, --engine, --rows)`);
});
if (baseRoot === null) throw new Error('bench: --base <another checkout> is needed');
const thisRoot = new URL('..', import.meta.url).pathname;

async function load(root: string, instance: string): Promise<Modules> {
  const url = (file: string): string => `${pathToFileURL(resolve(root, file)).href}?${instance}`;
  const values = (await import(url('src/common/values.ts'))) as { compareValues: Compare };
  const topN = (await import(url('src/common/top-n.ts'))) as {
    compareRows: (keys: readonly { index: number; desc: boolean; nullsFirst: boolean }[]) => RowCompare;
  };
  return {
    compareValues: values.compareValues,
    compareRows: topN.compareRows([{ index: 0, desc: false, nullsFirst: false }]),
  };
}

if (engine) {
  const { runEngine } = await import('./text-order-engine.ts');
  await runEngine({ baseRoot, thisRoot, aa, rounds, rows: engineRows });
  process.exit(0);
}

const modules: Record<'base' | 'this', Modules> = {
  base: await load(baseRoot, 'base'),
  this: aa ? await load(baseRoot, 'again') : await load(thisRoot, 'this'),
};

const N = 50_000;
const scramble = (i: number): number => (i * 7919) % N;
const shapes: Record<string, string[]> = {
  ascii: Array.from({ length: N }, (_, i) => `seller_${scramble(i)}`),
  prefix: Array.from(
    { length: N },
    (_, i) => `https://example.com/a/long/common/prefix/to/item/${scramble(i)}`,
  ),
  bmp: Array.from(
    { length: N },
    (_, i) => `Ünïcödé_${String.fromCharCode(0x4e00 + (scramble(i) % 2000))}${i % 97}`,
  ),
  astral: Array.from({ length: N }, (_, i) => `${i % 3 === 0 ? '\u{1F600}' : '\uE000'}${scramble(i)}`),
};

function sortValues(m: Modules, texts: readonly string[]): number {
  return texts.slice().sort(m.compareValues).length;
}

function sortRows(m: Modules, texts: readonly string[]): number {
  return texts.map((s, i) => [s, i]).sort(m.compareRows).length;
}

const ms: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const);
  for (const [shape, texts] of Object.entries(shapes)) {
    for (const [how, run] of [
      ['values', sortValues],
      ['rows', sortRows],
    ] as const) {
      for (const name of order) {
        const t0 = process.cpuUsage();
        run(modules[name], texts);
        const d = process.cpuUsage(t0);
        (ms[`${shape}/${how}/${name}`] ??= []).push((d.user + d.system) / 1000);
      }
    }
  }
}
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
const rows: Record<string, { base: string; this: string; ratio: string }> = {};
for (const shape of Object.keys(shapes)) {
  for (const how of ['values', 'rows']) {
    const b = median(ms[`${shape}/${how}/base`] ?? []);
    const t = median(ms[`${shape}/${how}/this`] ?? []);
    rows[`${shape}/${how}`] = { base: b.toFixed(1), this: t.toFixed(1), ratio: (t / b).toFixed(3) };
  }
}
console.log(JSON.stringify({ bench: 'text-order', aa, rounds, sortedTexts: N, medianCpuMs: rows }, null, 1));
