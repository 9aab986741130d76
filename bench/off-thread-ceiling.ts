// What moving work off the server's thread could save it, in-process, before anyone builds it.
//
// 1. The durable writes of an ingest group: the journal's batch rows and the changelog's entries
//    (their SQLite inserts and sha1 checksums) and the group's COMMIT (WAL, synchronous=NORMAL as a
//    group commit runs; the fdatasync is already off the thread), written with the server's own
//    SqliteStore, TableLog and ChangelogStore — against handing the same texts to a thread by
//    postMessage (what the server's thread would still pay if a writer thread owned the connection).
// 2. An ingest body: the flat row reader on the thread, against receiving what a thread read, as
//    row objects, as one flat value list or as Float64Array columns (v8.deserialize is
//    postMessage's receiving half).
//
// Both sides of 1 include the journal payloads' encoding (also timed alone): it stays on the thread
// either way, since the engine's value arrays cannot go to a thread cheaper than their text can.
//
// The group is the server bench's (bench/server-e2e.ts): 4 requests of 1,000 orders, 2 views, so
// 4 journal batches (~16 KB each) and 8 changelog entries (~16 KB for seller_totals' stored list,
// ~8 KB for total_histogram's), as a group of the server bench measured.
//
//   node --import tsx bench/off-thread-ceiling.ts [--rounds N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { FlatRowArrayReader } from '../src/common/json-codec-rows.ts';
import type { Value } from '../src/common/types.ts';
import { ChangelogStore } from '../src/storage/changelog-store.ts';
import { SqliteStore } from '../src/storage/sqlite-store.ts';
import { batchEntryPayload, TableLog } from '../src/storage/table-log.ts';

const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 7;
const GROUP_REQUESTS = 4;
const BATCH_ROWS = 1000;
const GROUPS_A_ROUND = 100;

let nextId = 1;
const rand = (n: number): number => Math.floor(Math.random() * n);
const rows = (): Value[][] => Array.from({ length: BATCH_ROWS }, () => [nextId++, rand(1000), 1 + rand(100)]);
/** A changelog message of about `bytes` ASCII bytes, fresh each call (as each epoch's is). */
const message = (epoch: number, bytes: number): string => {
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const part = `{"op":"+U","row":{"seller_id":${rand(1000)},"total":${rand(1e6)}}}`;
    parts.push(part);
    size += part.length + 1;
  }
  return `{"epoch":${epoch},"changes":[${parts.join(',')}]}`;
};
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

const dir = mkdtempSync(join(tmpdir(), 'off-thread-ceiling-'));
const store = new SqliteStore({ dataDir: dir });
const log = new TableLog(store, { beforeAppend: () => {}, afterDdl: () => {} });
const changelog = new ChangelogStore(store.db);
changelog.register('seller_totals', 1, 0);
changelog.register('total_histogram', 1, 0);
const sink = new Worker("require('node:worker_threads').parentPort.on('message', () => {});", {
  eval: true,
});
let epoch = 0;

interface Group {
  readonly batches: { epoch: number; inserts: Value[][] }[];
  readonly messages: { view: string; epoch: number; text: string }[];
}
const makeGroup = (): Group => {
  const batches: Group['batches'] = [];
  const messages: Group['messages'] = [];
  for (let i = 0; i < GROUP_REQUESTS; i++) {
    epoch += 1;
    batches.push({ epoch, inserts: rows() });
    messages.push({ view: 'seller_totals', epoch, text: message(epoch, 16_000) });
    messages.push({ view: 'total_histogram', epoch, text: message(epoch, 8_000) });
  }
  return { batches, messages };
};
const entryOf = (b: Group['batches'][number]) => ({
  epoch: b.epoch,
  table: 'orders',
  columns: ['order_id', 'seller_id', 'amount'],
  inserts: b.inserts,
  deletes: [],
});

/** As the server's thread does it today: encode, insert + sha1, COMMIT (its sync is on the pool). */
function writeOnThread(group: Group): void {
  store.deferSync = true;
  for (const b of group.batches) log.appendBatch(entryOf(b));
  for (const m of group.messages) changelog.append(m.view, m.epoch, Date.now(), m.text);
  store.commitUnsynced();
  store.deferSync = false;
}

/** What the thread would keep with a writer thread: the payloads' encoding and one postMessage. */
function handToThread(group: Group): void {
  const payloads = group.batches.map((b) => batchEntryPayload(entryOf(b)));
  sink.postMessage({ payloads, messages: group.messages });
}

/** The payloads' encoding alone: what both of the above include. */
function encodeOnly(group: Group): number {
  return group.batches.reduce((n, b) => n + batchEntryPayload(entryOf(b)).length, 0);
}

let syncs = 0;
// Round -1 warms the readers, writers and statements up (compiled code) and is not printed.
for (let round = -1; round < ROUNDS; round++) {
  const onThread: number[] = [];
  const handed: number[] = [];
  const encoded: number[] = [];
  for (let g = 0; g < GROUPS_A_ROUND; g++) {
    const a = makeGroup();
    let t = performance.now();
    writeOnThread(a);
    onThread.push(((performance.now() - t) * 1000) / GROUP_REQUESTS);
    const b = makeGroup();
    t = performance.now();
    handToThread(b);
    handed.push(((performance.now() - t) * 1000) / GROUP_REQUESTS);
    const c = makeGroup();
    t = performance.now();
    encodeOnly(c);
    encoded.push(((performance.now() - t) * 1000) / GROUP_REQUESTS);
    // The WAL's sync and checkpoint as the server runs them, off the measured lines.
    await new Promise<void>((resolve) => store.syncAsync(() => resolve()));
    if (++syncs % 50 === 0) store.db.pragma('wal_checkpoint(PASSIVE)');
  }
  const bodies = Array.from({ length: 50 }, () => {
    const text = rows()
      .map(([o, s, a]) => `{"order_id":${o},"seller_id":${s},"amount":${a}}`)
      .join(',');
    return Buffer.from(`[${text}]`);
  });
  const read: number[] = [];
  const objects: number[] = [];
  const flat: number[] = [];
  const columns: number[] = [];
  for (const body of bodies) {
    let t = performance.now();
    const got = new FlatRowArrayReader(body).read(Infinity) ?? [];
    read.push((performance.now() - t) * 1000);
    const asObjects = serialize(got);
    const values: unknown[] = [];
    const typed = new Float64Array(got.length * 3);
    let k = 0;
    for (const row of got) {
      values.push(row.order_id, row.seller_id, row.amount);
      typed[k++] = row.order_id as number;
      typed[k++] = row.seller_id as number;
      typed[k++] = row.amount as number;
    }
    const asFlat = serialize(values);
    const asColumns = serialize(typed);
    t = performance.now();
    deserialize(asObjects);
    objects.push((performance.now() - t) * 1000);
    t = performance.now();
    deserialize(asFlat);
    flat.push((performance.now() - t) * 1000);
    t = performance.now();
    deserialize(asColumns);
    columns.push((performance.now() - t) * 1000);
  }
  if (round >= 0)
    console.log(
      JSON.stringify({
        bench: 'off-thread-ceiling',
        round,
        us_per_batch_median: {
          durable_writes_on_thread: +median(onThread).toFixed(1),
          encode_and_post_to_thread: +median(handed).toFixed(1),
          journal_encode_alone: +median(encoded).toFixed(1),
          body_read_on_thread: +median(read).toFixed(1),
          body_received_as_row_objects: +median(objects).toFixed(1),
          body_received_as_flat_values: +median(flat).toFixed(1),
          body_received_as_float64_columns: +median(columns).toFixed(1),
        },
      }),
    );
}
await sink.terminate();
store.close();
rmSync(dir, { recursive: true, force: true });
