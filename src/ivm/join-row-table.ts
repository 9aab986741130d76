// A join arrangement's lookup table of its rows by value (see join-arrangement.ts): open addressing
// over one Int32Array of [mix, id + 1] pairs, at most half full, deleted by backward shift (no
// tombstones, so lookups stay short under churn). It holds ids only; whether a cell's row is the
// row sought is the arrangement's to tell (its slot and values).

/** A row's place in the lookup table: its hash mixed with its slot's. */
export function mix(slot: number, rowHash: number): number {
  let h = Math.imul(rowHash ^ Math.imul(slot + 1, 0x85ebca6b), 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

export class RowTable {
  /** [mix, id + 1] pairs; id + 1 === 0 marks an empty cell. Read by the arrangement's lookup. */
  cells = new Int32Array(32);
  /** Pairs in `cells` less one: a mix's first cell is `mix & mask`. */
  mask = 15;

  /** Empties the table, sized for `rows` rows without growing. */
  reset(rows: number): void {
    let cells = 32;
    while (cells < 4 * (rows + 1)) cells *= 2;
    this.cells = new Int32Array(cells);
    this.mask = cells / 2 - 1;
  }

  /** Doubles the table when one more row would fill it past half, `rows` being held now. */
  reserve(rows: number): void {
    if (2 * (rows + 1) <= this.mask + 1) return;
    const old = this.cells;
    this.cells = new Int32Array(old.length * 2);
    this.mask = old.length - 1;
    for (let i = 0; i < old.length; i += 2) {
      const s = old[i + 1] as number;
      if (s !== 0) this.insert(old[i] as number, s - 1);
    }
  }

  /** Adds row `id` at its mix `h` (the table has room: see `reserve`). */
  insert(h: number, id: number): void {
    const t = this.cells;
    const mask = this.mask;
    let i = h & mask;
    while (t[2 * i + 1] !== 0) i = (i + 1) & mask;
    t[2 * i] = h;
    t[2 * i + 1] = id + 1;
  }

  /** Removes row `id`, held at its mix `h`. */
  remove(h: number, id: number): void {
    const t = this.cells;
    const mask = this.mask;
    let i = h & mask;
    while (t[2 * i + 1] !== id + 1) i = (i + 1) & mask;
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const s = t[2 * j + 1] as number;
      if (s === 0) break;
      const home = (t[2 * j] as number) & mask;
      // Move j into the hole unless its home lies cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        t[2 * hole] = t[2 * j] as number;
        t[2 * hole + 1] = s;
        hole = j;
      }
    }
    t[2 * hole] = 0;
    t[2 * hole + 1] = 0;
  }
}
