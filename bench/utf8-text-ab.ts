// What the first WebSocket subscriber of an epoch asks of its wire message, per epoch: a fresh
// ~45 KB `changes` text of total_histogram's shape (built as the encoder builds it: bytes read back
// as latin1, then wrapped), its UTF-8 length three times (the budget's admit, the subscriber's write,
// the transport's meter) and its bytes (src/sink/utf8-text.ts). Alternating rounds of two checkouts'
// module; CPU µs per epoch, median of the rounds (the text's own building included in both).
//
//   node --import tsx bench/utf8-text-ab.ts --base ../sluice-base/src/sink/utf8-text.ts [--this FILE] [--rounds 15]
import { forEachFlag, intArg } from './bench-args.ts';

interface Utf8Text {
  utf8Length(text: string): number;
  utf8Bytes(text: string): Buffer;
}

let baseFile: string | null = null;
let thisFile = new URL('../src/sink/utf8-text.ts', import.meta.url).pathname;
let rounds = 15;
forEachFlag(process.argv.slice(2), (flag, value) => {
  if (flag === '--base') baseFile = value();
  else if (flag === '--this') thisFile = value();
  else if (flag === '--rounds') rounds = intArg(flag, value());
  else throw new Error(`bench: unknown option ${flag} (--base, --this, --rounds)`);
});
if (baseFile === null) throw new Error('bench: --base <another checkout>/src/sink/utf8-text.ts is needed');

const modules: Record<'base' | 'this', Utf8Text> = {
  base: (await import(baseFile)) as Utf8Text,
  this: (await import(thisFile)) as Utf8Text,
};
const changes: string[] = [];
for (let i = 0; i < 980; i++) {
  changes.push(`{"op":"${i % 2 === 0 ? '-U' : '+U'}","row":{"bucket":${i * 7},"sellers":${i % 13}}}`);
}
const listBytes = Buffer.from(changes.join(','), 'latin1');
const EPOCHS = 2000;

function run(m: Utf8Text): number {
  let sink = 0;
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    const text = `{"type":"changes","epoch":${epoch},"positions":{},"changes":[${listBytes.toString('latin1')}]}`;
    sink += m.utf8Length(text) + m.utf8Length(text) + m.utf8Length(text) + m.utf8Bytes(text).length;
  }
  return sink;
}

const micros: Record<'base' | 'this', number[]> = { base: [], this: [] };
for (let r = 0; r < rounds; r++) {
  for (const name of ['base', 'this'] as const) {
    const t0 = process.cpuUsage();
    run(modules[name]);
    const d = process.cpuUsage(t0);
    micros[name].push((d.user + d.system) / EPOCHS);
    await new Promise((resolve) => setImmediate(resolve)); // the tick ends: the modules forget their text
  }
}
const median = (xs: number[]): string => ([...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN).toFixed(1);
console.log(
  JSON.stringify({
    bench: 'utf8-text-ab',
    message_bytes: listBytes.length + 60,
    us_per_epoch_base: Number(median(micros.base)),
    us_per_epoch_this: Number(median(micros.this)),
    rounds,
  }),
);
