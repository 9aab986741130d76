// In-process: the changelog encoder of a subscribed view (stored form + wire message) and the
// WebSocket's UTF-8 length and bytes of the message, over histogram-like change sets (~980 -U/+U
// changes of two integer columns, as total_histogram's late epochs in bench/server-e2e.ts).
//   node --import tsx bench/wire-encode.ts [--codec PATH_TO/changelog-codec.ts] [--rounds 20] [--encode-only | --stored-only]
import { createHash } from 'node:crypto';
import type { RawChange } from '../src/common/raw-changes.ts';

const args = process.argv.slice(2);
const at = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
};
const codecPath = at('--codec') ?? new URL('../src/storage/changelog-codec.ts', import.meta.url).pathname;
const rounds = Number(at('--rounds') ?? 20);
// --encode-only: the encoder alone (no UTF-8 length, bytes or checksum of its output).
const encodeOnly = args.includes('--encode-only');
// --stored-only: the stored form alone, as for a view nobody subscribes to (no wire message).
const storedOnly = args.includes('--stored-only');
const codec = (await import(codecPath)) as typeof import('../src/storage/changelog-codec.ts');
// The change sets from the same checkout as the codec (it recognises its own lazy sets only).
const { lazyChangeSet, ChangeList } = (await import(
  codecPath.replace(/storage\/changelog-codec\.ts$/, 'common/raw-changes.ts')
)) as typeof import('../src/common/raw-changes.ts');

let seed = 99;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const columns = ['bucket', 'sellers'];
const sets = Array.from({ length: 200 }, (_, e) => {
  const rows: RawChange[] = [];
  for (let i = 0; i < 490; i++) {
    const bucket = i * 2 + rand(2);
    const sellers = 1 + rand(60);
    rows.push({ op: '-U', row: [bucket, sellers], n: 1 }, { op: '+U', row: [bucket, sellers + 1], n: 1 });
  }
  // A checkout from before change lists takes the change objects themselves.
  const list =
    ChangeList === undefined ? (rows as unknown as InstanceType<typeof ChangeList>) : ChangeList.of(rows);
  return lazyChangeSet('total_histogram', e + 1, {}, { columns, rows: list }, []);
});
let sink = 0;
const times: number[] = [];
for (let r = 0; r < rounds; r++) {
  const t0 = process.cpuUsage();
  for (const cs of sets) {
    if (storedOnly) {
      sink += codec.encodeChangesStored(cs).length;
      continue;
    }
    const { stored, wire } = codec.encodeChanges(cs, true);
    const text = wire as string;
    if (encodeOnly) {
      sink += text.length + stored.length;
      continue;
    }
    sink += Buffer.byteLength(text, 'utf8') + Buffer.from(text, 'utf8').length;
    sink += createHash('sha1').update(stored).digest('base64').length;
  }
  const t = process.cpuUsage(t0);
  times.push((t.user + t.system) / sets.length);
}
times.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    bench: 'wire-encode',
    codec: codecPath,
    encode_only: encodeOnly,
    stored_only: storedOnly,
    us_per_epoch_median: Number((times[Math.floor(times.length / 2)] ?? NaN).toFixed(1)),
    us_per_epoch_best: Number((times[0] ?? NaN).toFixed(1)),
    sink,
  }),
);
