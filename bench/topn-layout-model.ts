// A model of the Top-N's tail delete (bench/topn.ts's shape: 10,000 partitions of about 100 rows,
// 100,000 random deletes in batches of 1,000, each a scan of its partition's unordered tail for the
// row's image, then a swap with the last tail row), in three memory layouts, to size a layout change
// before making it in src/ivm/ops/topn-partition.ts. Not the operator: no sorted rows, no refill,
// no output; rows are found by identity. The layouts:
//   objects        today's: a partition object per key, holding its own rows array and images array
//   stamp-by-slot  the same, but the grouping pass marks slots in an Int32Array, not the objects
//   by-slot        the same arrays, reached from arrays indexed by the partition's slot (no
//                  partition object on the way)
//   image-slab     the images in one Float64Array, a fixed region per slot; rows in an array per
//                  partition, reached by slot
//   slabs          every partition's images in one Int32Array and rows in one array, a fixed region
//                  per slot, lengths in an Int32Array (no object and no array header on the way)
//   slabs-f64      the same with the images as doubles, as a general image is
//   interleaved    one array per partition holding image, row, image, row… (an integer image is a
//                  small integer, unboxed beside its row): a match's row is on the image's cache
//                  line, and an append writes one array instead of two
//   objects-noted  today's objects with the operator's tail notes (TailPlaces, 2026-12-05): a
//                  delete takes its row at the index noted by its id, else scans
//   slabs-noted    the slabs with the same notes: what the slab layout would save a noted delete
// Each round builds fresh rows for every layout, runs them in a rotating order and prints µs of CPU
// per delete (all deletes; about 88% are in a tail, as in bench/topn.ts), and per append for the
// layouts whose rows grow by appends (`objects` and `interleaved`: the build, every row appended to
// its partition's end, as a tail insert is, growth and collections included); read the medians over
// the rounds (the machine's load moves single rounds).
//   node --expose-gc --import tsx bench/topn-layout-model.ts [--rounds 9]
import { loadavg } from 'node:os';
import { sfc32 } from './workload.ts';
import { flag } from './ab-checkouts.ts';

const PARTS = 10_000;
const PER_PART = 100;
/** Slab region per partition: room for the most rows any partition draws here. */
const REGION = 192;
const SORTED = 12;
const DELETES = 100_000;
const BATCH = 1_000;
const rounds = Number(flag('rounds', '9'));
/** µs of CPU per append, by round, of the layouts that time their build. */
const appendUs = { objects: [] as number[], interleaved: [] as number[] };
/** Deletes of the noted layouts whose note no longer named their row (they scanned), summed. */
let notedMisses = 0;

type Row = [number, number, number, number];
interface Workload {
  rows: Row[];
  deletes: Row[];
  /** Deletes of a row past its partition's first SORTED rows: the ones a tail scan finds. */
  inTail: number;
}

function workload(seed: number): Workload {
  const rnd = sfc32(seed);
  const rows: Row[] = [];
  for (let i = 0; i < PARTS * PER_PART; i++)
    rows.push([i + 1, Math.floor(rnd() * PARTS), 3, 1 + Math.floor(rnd() * 1_000_000)]);
  const chosen = new Set<Row>();
  while (chosen.size < DELETES) chosen.add(rows[Math.floor(rnd() * rows.length)] as Row);
  // The first SORTED rows of a partition stand for its sorted rows: a tail scan never finds them.
  const seen = new Int32Array(PARTS);
  const tail = new Set<Row>();
  for (const row of rows) if ((seen[row[1]] = (seen[row[1]] as number) + 1) > SORTED) tail.add(row);
  let inTail = 0;
  for (const row of chosen) if (tail.has(row)) inTail++;
  return { rows, deletes: [...chosen], inTail };
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

class Part {
  rows: Row[] = [];
  keys: number[] = [];
  sorted = 0;
  stamp = 0;
}

/** Today's layout. Returns µs of CPU per delete (every delete must find its row). */
function objects(w: Workload): number {
  const parts: Part[] = [];
  for (let p = 0; p < PARTS; p++) parts.push(new Part());
  const built = cpu();
  for (const row of w.rows) {
    const part = parts[row[1]] as Part;
    part.rows.push(row);
    part.keys.push(-row[3]);
  }
  appendUs.objects.push((cpu() - built) / w.rows.length);
  for (const part of parts) part.sorted = Math.min(SORTED, part.rows.length);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    const touched: Part[] = [];
    for (let i = b; i < end; i++) {
      const part = parts[(w.deletes[i] as Row)[1]] as Part;
      part.stamp++;
      touched.push(part);
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const part = touched[i - b] as Part;
      const image = -row[3];
      const keys = part.keys;
      for (let j = part.sorted; j < keys.length; j++) {
        if (keys[j] !== image) continue;
        const rows = part.rows;
        if (rows[j] !== row) continue;
        const last = rows.length - 1;
        rows[j] = rows[last] as Row;
        keys[j] = keys[last] as number;
        rows.pop();
        keys.pop();
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/** Today's objects, but the grouping pass marks slots in an Int32Array, not partition objects. */
function stampBySlot(w: Workload): number {
  const parts: Part[] = [];
  for (let p = 0; p < PARTS; p++) parts.push(new Part());
  for (const row of w.rows) {
    const part = parts[row[1]] as Part;
    part.rows.push(row);
    part.keys.push(-row[3]);
  }
  for (const part of parts) part.sorted = Math.min(SORTED, part.rows.length);
  const stamp = new Int32Array(PARTS);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const part = parts[row[1]] as Part;
      const image = -row[3];
      const keys = part.keys;
      for (let j = part.sorted; j < keys.length; j++) {
        if (keys[j] !== image) continue;
        const rows = part.rows;
        if (rows[j] !== row) continue;
        const last = rows.length - 1;
        rows[j] = rows[last] as Row;
        keys[j] = keys[last] as number;
        rows.pop();
        keys.pop();
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/** The same arrays, reached by slot. */
function bySlot(w: Workload): number {
  const keysOf: number[][] = [];
  const rowsOf: Row[][] = [];
  for (let p = 0; p < PARTS; p++) {
    keysOf.push([]);
    rowsOf.push([]);
  }
  for (const row of w.rows) {
    (rowsOf[row[1]] as Row[]).push(row);
    (keysOf[row[1]] as number[]).push(-row[3]);
  }
  const sorted = new Int32Array(PARTS);
  const stamp = new Int32Array(PARTS);
  for (let p = 0; p < PARTS; p++) sorted[p] = Math.min(SORTED, (rowsOf[p] as Row[]).length);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const p = row[1];
      const image = -row[3];
      const keys = keysOf[p] as number[];
      for (let j = sorted[p] as number; j < keys.length; j++) {
        if (keys[j] !== image) continue;
        const rows = rowsOf[p] as Row[];
        if (rows[j] !== row) continue;
        const last = rows.length - 1;
        rows[j] = rows[last] as Row;
        keys[j] = keys[last] as number;
        rows.pop();
        keys.pop();
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/** Slabs: one Int32Array of images, one array of rows, a region per slot. */
function slabs(w: Workload): number {
  const keys = new Int32Array(PARTS * REGION);
  const rows = new Array<Row | null>(PARTS * REGION).fill(null);
  const length = new Int32Array(PARTS);
  const sorted = new Int32Array(PARTS);
  const stamp = new Int32Array(PARTS);
  for (const row of w.rows) {
    const p = row[1];
    const n = length[p] as number;
    if (n === REGION) throw new Error('topn-layout-model: a partition outgrew its region');
    rows[p * REGION + n] = row;
    keys[p * REGION + n] = -row[3];
    length[p] = n + 1;
  }
  for (let p = 0; p < PARTS; p++) sorted[p] = Math.min(SORTED, length[p] as number);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const p = row[1];
      const image = -row[3];
      const from = p * REGION;
      const to = from + (length[p] as number);
      for (let j = from + (sorted[p] as number); j < to; j++) {
        if (keys[j] !== image) continue;
        if (rows[j] !== row) continue;
        rows[j] = rows[to - 1] as Row;
        keys[j] = keys[to - 1] as number;
        rows[to - 1] = null;
        length[p] = (length[p] as number) - 1;
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/**
 * Today's objects with the operator's tail notes (TopNOp's TailPlaces since 2026-12-05): the index at
 * which each row was appended, by its id, in an Int32Array. A delete takes its row there if that
 * index still holds it (its image, then the row), else scans; a swap leaves the moved row's note
 * stale, as the operator does (noting it would read the moved row, a cold line).
 */
function objectsNoted(w: Workload): number {
  const parts: Part[] = [];
  for (let p = 0; p < PARTS; p++) parts.push(new Part());
  const notes = new Int32Array(w.rows.length + 1);
  for (const row of w.rows) {
    const part = parts[row[1]] as Part;
    notes[row[0]] = part.rows.length + 1;
    part.rows.push(row);
    part.keys.push(-row[3]);
  }
  for (const part of parts) part.sorted = Math.min(SORTED, part.rows.length);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    const touched: Part[] = [];
    for (let i = b; i < end; i++) {
      const part = parts[(w.deletes[i] as Row)[1]] as Part;
      part.stamp++;
      touched.push(part);
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const part = touched[i - b] as Part;
      const image = -row[3];
      const keys = part.keys;
      const rows = part.rows;
      const noted = (notes[row[0]] as number) - 1;
      notes[row[0]] = 0;
      let j =
        noted >= part.sorted && noted < keys.length && keys[noted] === image && rows[noted] === row
          ? noted
          : -1;
      if (j < 0) {
        notedMisses++;
        for (let k = part.sorted; k < keys.length; k++)
          if (keys[k] === image && rows[k] === row) {
            j = k;
            break;
          }
      }
      if (j < 0) continue;
      const last = rows.length - 1;
      rows[j] = rows[last] as Row;
      keys[j] = keys[last] as number;
      rows.pop();
      keys.pop();
      found++;
    }
  }
  return perDelete(cpu() - t, found, w);
}

/**
 * Slabs (rows and images in one array each, a fixed region per slot, lengths and sorted counts in
 * Int32Arrays) with the same notes: no partition object and no array header between a delete's note
 * and its row.
 */
function slabsNoted(w: Workload): number {
  const keys = new Int32Array(PARTS * REGION);
  const rows = new Array<Row | null>(PARTS * REGION).fill(null);
  const length = new Int32Array(PARTS);
  const sorted = new Int32Array(PARTS);
  const stamp = new Int32Array(PARTS);
  const notes = new Int32Array(w.rows.length + 1);
  for (const row of w.rows) {
    const p = row[1];
    const n = length[p] as number;
    if (n === REGION) throw new Error('topn-layout-model: a partition outgrew its region');
    rows[p * REGION + n] = row;
    keys[p * REGION + n] = -row[3];
    notes[row[0]] = n + 1;
    length[p] = n + 1;
  }
  for (let p = 0; p < PARTS; p++) sorted[p] = Math.min(SORTED, length[p] as number);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const p = row[1];
      const image = -row[3];
      const from = p * REGION;
      const first = from + (sorted[p] as number);
      const to = from + (length[p] as number);
      const noted = from + (notes[row[0]] as number) - 1;
      notes[row[0]] = 0;
      let j = noted >= first && noted < to && keys[noted] === image && rows[noted] === row ? noted : -1;
      if (j < 0) {
        notedMisses++;
        for (let k = first; k < to; k++)
          if (keys[k] === image && rows[k] === row) {
            j = k;
            break;
          }
      }
      if (j < 0) continue;
      rows[j] = rows[to - 1] as Row;
      keys[j] = keys[to - 1] as number;
      rows[to - 1] = null;
      length[p] = (length[p] as number) - 1;
      found++;
    }
  }
  return perDelete(cpu() - t, found, w);
}

/**
 * The same slabs with the images as doubles (a general image: twice the bytes a scan streams). A copy
 * of `slabs`, not a parameter of it: each layout's loop must see one typed-array kind, as the
 * operator's would, not two (a polymorphic load is a cost the real layout would not pay).
 */
function slabsF64(w: Workload): number {
  const keys = new Float64Array(PARTS * REGION);
  const rows = new Array<Row | null>(PARTS * REGION).fill(null);
  const length = new Int32Array(PARTS);
  const sorted = new Int32Array(PARTS);
  const stamp = new Int32Array(PARTS);
  for (const row of w.rows) {
    const p = row[1];
    const n = length[p] as number;
    if (n === REGION) throw new Error('topn-layout-model: a partition outgrew its region');
    rows[p * REGION + n] = row;
    keys[p * REGION + n] = -row[3];
    length[p] = n + 1;
  }
  for (let p = 0; p < PARTS; p++) sorted[p] = Math.min(SORTED, length[p] as number);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const p = row[1];
      const image = -row[3];
      const from = p * REGION;
      const to = from + (length[p] as number);
      for (let j = from + (sorted[p] as number); j < to; j++) {
        if (keys[j] !== image) continue;
        if (rows[j] !== row) continue;
        rows[j] = rows[to - 1] as Row;
        keys[j] = keys[to - 1] as number;
        rows[to - 1] = null;
        length[p] = (length[p] as number) - 1;
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/** Images in a Float64Array slab by slot; rows still in an array per partition, reached by slot. */
function imageSlab(w: Workload): number {
  const keys = new Float64Array(PARTS * REGION);
  const rowsOf: Row[][] = [];
  for (let p = 0; p < PARTS; p++) rowsOf.push([]);
  const sorted = new Int32Array(PARTS);
  const stamp = new Int32Array(PARTS);
  for (const row of w.rows) {
    const list = rowsOf[row[1]] as Row[];
    if (list.length === REGION) throw new Error('topn-layout-model: a partition outgrew its region');
    keys[row[1] * REGION + list.length] = -row[3];
    list.push(row);
  }
  for (let p = 0; p < PARTS; p++) sorted[p] = Math.min(SORTED, (rowsOf[p] as Row[]).length);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    for (let i = b; i < end; i++) {
      const p = (w.deletes[i] as Row)[1];
      stamp[p] = (stamp[p] as number) + 1;
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const p = row[1];
      const image = -row[3];
      const rows = rowsOf[p] as Row[];
      const from = p * REGION;
      const to = from + rows.length;
      for (let j = from + (sorted[p] as number); j < to; j++) {
        if (keys[j] !== image) continue;
        if (rows[j - from] !== row) continue;
        rows[j - from] = rows[rows.length - 1] as Row;
        keys[j] = keys[to - 1] as number;
        rows.pop();
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

/** One array per partition: image, row, image, row… An integer image stays an unboxed small integer. */
class MixedPart {
  slots: (number | Row)[] = [];
  sorted = 0;
  stamp = 0;
}

/** Images and rows interleaved in one array per partition. */
function interleaved(w: Workload): number {
  const parts: MixedPart[] = [];
  for (let p = 0; p < PARTS; p++) parts.push(new MixedPart());
  const built = cpu();
  for (const row of w.rows) (parts[row[1]] as MixedPart).slots.push(-row[3], row);
  appendUs.interleaved.push((cpu() - built) / w.rows.length);
  for (const part of parts) part.sorted = Math.min(SORTED, part.slots.length / 2);
  const t = cpu();
  let found = 0;
  for (let b = 0; b < w.deletes.length; b += BATCH) {
    const end = Math.min(w.deletes.length, b + BATCH);
    const touched: MixedPart[] = [];
    for (let i = b; i < end; i++) {
      const part = parts[(w.deletes[i] as Row)[1]] as MixedPart;
      part.stamp++;
      touched.push(part);
    }
    for (let i = b; i < end; i++) {
      const row = w.deletes[i] as Row;
      const part = touched[i - b] as MixedPart;
      const image = -row[3];
      const slots = part.slots;
      for (let j = 2 * part.sorted; j < slots.length; j += 2) {
        if (slots[j] !== image || slots[j + 1] !== row) continue;
        const last = slots.length - 2;
        slots[j] = slots[last] as number;
        slots[j + 1] = slots[last + 1] as Row;
        slots.length = last;
        found++;
        break;
      }
    }
  }
  return perDelete(cpu() - t, found, w);
}

function perDelete(us: number, found: number, w: Workload): number {
  if (found !== w.inTail) throw new Error(`topn-layout-model: found ${found} of ${w.inTail}`);
  return us / w.deletes.length;
}

const layouts = {
  objects,
  'stamp-by-slot': stampBySlot,
  'by-slot': bySlot,
  'image-slab': imageSlab,
  slabs,
  'slabs-f64': slabsF64,
  'objects-noted': objectsNoted,
  'slabs-noted': slabsNoted,
  interleaved,
} as const;
type Layout = keyof typeof layouts;
const names = Object.keys(layouts) as Layout[];
const results = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<Layout, number[]>;
for (let r = 0; r < rounds; r++) {
  const line: Record<string, number> = {};
  for (let k = 0; k < names.length; k++) {
    const name = names[(r + k) % names.length] as Layout;
    const w = workload(20261204 + r);
    (globalThis as { gc?: () => void }).gc?.();
    const us = layouts[name](w);
    results[name].push(us);
    line[name] = Number(us.toFixed(3));
  }
  console.log(JSON.stringify({ round: r + 1, ...line, loadavg: Number(loadavg()[0]?.toFixed(2)) }));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  JSON.stringify({
    bench: 'topn-layout-model',
    us_per_delete_median: Object.fromEntries(names.map((n) => [n, Number(median(results[n]).toFixed(3))])),
    us_per_append_median: {
      objects: Number(median(appendUs.objects).toFixed(3)),
      interleaved: Number(median(appendUs.interleaved).toFixed(3)),
    },
    // Of the noted layouts' deletes, the share whose note missed (a moved row, or a sorted row).
    noted_miss_share: Number((notedMisses / (2 * rounds * DELETES)).toFixed(3)),
  }),
);
