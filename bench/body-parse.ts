// In-process: what the server's JSON body parser (src/server/request-bodies.ts) does to an ingest body
// besides JSON.parse — the strict UTF-8 decode, the digit-run search that decides between JSON.parse
// and the exact parser, and the lone-surrogate test — and the whole parse with them, over bodies of
// bench/server-e2e.ts's shape (1,000 rows of order_id, seller_id, amount; about 50 KB). Two checkouts'
// json-codec.ts are timed in alternating rounds in one process (CPU µs per body, median of rounds).
//   node --import tsx bench/body-parse.ts [--base PATH_TO/json-codec.ts] [--this PATH] [--rounds 21]
// (`--this` the base's path as well: an A/A of the tool.) Each round also times the route's reader of
// flat row bodies (src/common/json-codec-rows.ts), which the server now tries before all of the above;
// `--rows-base PATH_TO/json-codec-rows.ts` times another checkout's reader beside it, in alternating
// order (`--rows-this PATH` as for `--this`).
import { forEachFlag, intArg } from './bench-args.ts';

let thisPath = new URL('../src/common/json-codec.ts', import.meta.url).pathname;
let basePath: string | undefined;
let rowsThisPath = new URL('../src/common/json-codec-rows.ts', import.meta.url).pathname;
let rowsBasePath: string | undefined;
let rounds = 21;
forEachFlag(process.argv.slice(2), (flag, value) => {
  if (flag === '--this') thisPath = value();
  else if (flag === '--base') basePath = value();
  else if (flag === '--rows-this') rowsThisPath = value();
  else if (flag === '--rows-base') rowsBasePath = value();
  else if (flag === '--rounds') rounds = Math.max(1, intArg(flag, value()));
  else
    throw new Error(
      `bench: unknown option ${flag} (--base PATH, --this PATH, --rows-base PATH, --rows-this PATH, --rounds N)`,
    );
});
type Codec = typeof import('../src/common/json-codec.ts');
const codecs: [string, Codec][] = [['this', (await import(thisPath)) as Codec]];
if (basePath !== undefined) codecs.push(['base', (await import(basePath)) as Codec]);
type RowReader = typeof import('../src/common/json-codec-rows.ts');
const readers: [string, RowReader][] = [['this', (await import(rowsThisPath)) as RowReader]];
if (rowsBasePath !== undefined) readers.push(['base', (await import(rowsBasePath)) as RowReader]);

let seed = 7;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
// Ids of 7 digits, as the server sees once it holds its first million rows.
let nextId = 1_000_000;
const bodies = Array.from({ length: 50 }, () => {
  const rows: string[] = [];
  for (let i = 0; i < 1000; i++)
    rows.push(`{"order_id":${nextId++},"seller_id":${rand(10_000)},"amount":${1 + rand(100)}}`);
  return Buffer.from(`[${rows.join(',')}]`);
});

/** The parser's steps as request-bodies.ts takes them, the JSON.parse included or not. */
function scans(codec: Codec, bytes: Buffer, parse: boolean): number {
  const text = codec.decodeUtf8Strict(bytes);
  if (text === null) throw new Error('not UTF-8');
  let n = text.length;
  if (parse) n += (codec.parseJsonExact(text) as unknown[]).length;
  else n += codec.hasLongDigitRun(text) ? 1 : 0;
  return n + (codec.mayHoldLoneSurrogate(text) ? 1 : 0);
}

const times = new Map<string, number[]>();
let sink = 0;
for (let r = 0; r < rounds; r++) {
  // Alternating which checkout goes first, so neither always runs on a warmer machine.
  const order = r % 2 === 0 ? codecs : [...codecs].reverse();
  for (const [name, codec] of order) {
    for (const parse of [false, true]) {
      const t0 = process.cpuUsage();
      for (let k = 0; k < 4; k++) for (const body of bodies) sink += scans(codec, body, parse);
      const t = process.cpuUsage(t0);
      const key = `${name} ${parse ? 'whole parse' : 'scans only'}`;
      const list = times.get(key) ?? [];
      list.push((t.user + t.system) / (4 * bodies.length));
      times.set(key, list);
    }
  }
  for (const [name, reader] of r % 2 === 0 ? readers : [...readers].reverse()) {
    const t0 = process.cpuUsage();
    for (let k = 0; k < 4; k++)
      for (const body of bodies) sink += reader.parseFlatRowArray(body)?.length ?? 0;
    const t = process.cpuUsage(t0);
    const key = `${name} flat row reader`;
    const list = times.get(key) ?? [];
    list.push((t.user + t.system) / (4 * bodies.length));
    times.set(key, list);
  }
}
for (const [key, list] of times) {
  list.sort((a, b) => a - b);
  const median = list[list.length >> 1] ?? 0;
  console.log(
    JSON.stringify({
      bench: 'body-parse',
      codec: key,
      body_bytes: bodies[0]?.length,
      us_per_body_median: Number(median.toFixed(1)),
      us_per_body_min: Number((list[0] ?? 0).toFixed(1)),
      us_per_body_max: Number((list[list.length - 1] ?? 0).toFixed(1)),
    }),
  );
}
if (sink === 0) console.log('');
