// Seeded random schemas, views and change batches for the differential and property suites. Every
// choice comes from one mulberry32 stream, so a seed replays exactly (as long as this file is
// unchanged: GENERATOR_VERSION names the stream's shape and is recorded with regression seeds).
//
// The generated SQL stays inside the subset where PostgreSQL (Sluice's semantics) and SQLite (the
// oracle) agree, see sqlite-oracle.ts for the normalisations. Rules that keep it there:
//  - divide and take % only by non-zero integer constants, and only integer expressions whose SQLite
//    value is an integer and whose PostgreSQL type is an integer (`safe`); floats divide by `4.0`-style
//    real literals, so SQLite never does integer division where PostgreSQL would not;
//  - values stay small (no overflow): ints in [-20, 60], smallints in [0, 9], bigints either up to 1e12
//    or "huge" (near ±2^62, used only where no arithmetic happens: compare, MIN/MAX, COUNT, GROUP BY);
//  - doubles/numerics are multiples of 1/4 (exact binary fractions), so sums are exact in any order
//    and ROUND(x + 0.1) never meets a .5 tie; ROUND/FLOOR/CEIL only see float arguments;
//  - CAST(... AS ...) only int→text, int→double precision, bool→integer (no `::`, no float→int/text);
//  - text is lowercase ASCII plus a few digits and `_`; every expression is fully parenthesised (the
//    `||` precedence differs between the two systems).
import type { Row, Value } from '../../src/common/types.ts';
import type { Changes, ColumnSpec, TableSpec } from './sqlite-oracle.ts';

export const GENERATOR_VERSION = 1;

/** mulberry32: a small, fast, seedable PRNG (no Math.random anywhere in the suites). */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('Rng.pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
  /** Picks by weight: [[weight, value], ...]. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of choices) {
      if (r < w) return v;
      r -= w;
    }
    const last = choices[choices.length - 1];
    if (last === undefined) throw new Error('Rng.weighted with no choices');
    return last[1];
  }
}

/** Derives independent seeds from a base seed (splitmix-style). */
export function deriveSeed(base: number, index: number): number {
  let z = (base + Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------------------------------
// Schemas

export type ColumnKind =
  | 'smallint'
  | 'int'
  | 'bigint'
  | 'huge'
  | 'double'
  | 'numeric'
  | 'text'
  | 'varchar'
  | 'bool'
  | 'date'
  | 'timestamp';

const SQL_TYPE: Record<ColumnKind, string> = {
  smallint: 'smallint',
  int: 'integer',
  bigint: 'bigint',
  huge: 'bigint',
  double: 'double precision',
  numeric: 'numeric(12,2)',
  text: 'text',
  varchar: 'varchar(16)',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
};

export interface GenColumn extends ColumnSpec {
  readonly kind: ColumnKind;
}

export interface GenTable extends TableSpec {
  readonly columns: readonly GenColumn[];
}

const WORDS = [
  'apple',
  'banana',
  'cherry',
  'ab',
  'ba',
  'abc',
  '',
  'a_b',
  'x1',
  'pear',
  'plum',
  'kiwi',
  'b2',
  'zz',
];

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function randomDate(rng: Rng): string {
  const d = new Date(Date.UTC(2024, 0, 1) + rng.int(0, 365) * 86400000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function randomValue(rng: Rng, col: GenColumn): Value {
  if (col.nullable && rng.chance(0.1)) return null;
  switch (col.kind) {
    case 'smallint':
      return rng.int(0, 9);
    case 'int':
      return rng.int(-20, 60);
    case 'bigint':
      return rng.chance(0.5) ? rng.int(0, 40) : rng.int(0, 1_000_000) * 1_000_000 + rng.int(0, 999);
    case 'huge': {
      const base = 1n << 62n;
      const off = BigInt(rng.int(0, 20));
      return rng.chance(0.5) ? base - off : -base + off;
    }
    case 'double':
    case 'numeric':
      return rng.int(-200, 400) / 4;
    case 'text':
    case 'varchar':
      return rng.pick(WORDS);
    case 'bool':
      return rng.chance(0.5);
    case 'date':
      return randomDate(rng);
    case 'timestamp':
      return `${randomDate(rng)} ${pad(rng.int(0, 23))}:${pad(rng.pick([0, 15, 30, 45]))}:${pad(rng.int(0, 59))}`;
  }
}

const NON_KEY_KINDS: readonly ColumnKind[] = [
  'smallint',
  'int',
  'int',
  'bigint',
  'huge',
  'double',
  'numeric',
  'text',
  'varchar',
  'bool',
  'date',
  'timestamp',
];

export function randomTable(rng: Rng, name: string): GenTable {
  const columns: GenColumn[] = [];
  let primaryKey: string[] | null = null;
  const keyShape = rng.weighted<'none' | 'int' | 'composite'>([
    [4, 'none'],
    [4, 'int'],
    [2, 'composite'],
  ]);
  if (keyShape !== 'none') {
    columns.push({ name: 'id', kind: 'int', sqlType: 'integer', nullable: false });
    primaryKey = ['id'];
    if (keyShape === 'composite') {
      columns.push({ name: 'region', kind: 'text', sqlType: 'text', nullable: false });
      primaryKey.push('region');
    }
  }
  // Always at least one small int and one text column so every template has material.
  const kinds: ColumnKind[] = ['int', 'text'];
  const extra = rng.int(2, 6);
  for (let i = 0; i < extra; i++) kinds.push(rng.pick(NON_KEY_KINDS));
  kinds.forEach((kind, i) => {
    columns.push({
      name: `${kind.slice(0, 3)}${i}`,
      kind,
      sqlType: SQL_TYPE[kind],
      nullable: rng.chance(0.6),
    });
  });
  return { name, columns, primaryKey };
}

// ---------------------------------------------------------------------------------------------------
// Expressions

type EKind = 'int' | 'float' | 'text' | 'bool' | 'date' | 'ts';

/** A column of a relation (table or view) that expressions can reference. */
interface SrcCol {
  readonly name: string;
  readonly kind: EKind;
  /** int only: SQLite holds an integer and PostgreSQL types it as an integer (division-safe). */
  readonly safe: boolean;
  /** int only: PostgreSQL type is bigint (SUM of it is numeric). */
  readonly wide: boolean;
  /** bigint near ±2^62: no arithmetic on it. */
  readonly huge: boolean;
}

interface Rel {
  readonly name: string;
  readonly cols: readonly SrcCol[];
  /** 0 for a table, 1 + the source's depth for a view. */
  readonly depth: number;
}

interface GExpr {
  readonly sql: string;
  readonly kind: EKind;
  readonly safe: boolean;
  readonly wide: boolean;
  readonly huge: boolean;
  /** float only: an exact multiple of a small power of two (ROUND(x + 0.1) cannot tie). */
  readonly dyadic: boolean;
}

function ex(sql: string, kind: EKind, parts: readonly GExpr[] = [], over: Partial<GExpr> = {}): GExpr {
  return {
    sql,
    kind,
    safe: parts.every((p) => p.safe),
    wide: parts.some((p) => p.wide),
    huge: false,
    dyadic: parts.every((p) => p.dyadic),
    ...over,
  };
}

function colExpr(c: SrcCol): GExpr {
  return { sql: c.name, kind: c.kind, safe: c.safe, wide: c.wide, huge: c.huge, dyadic: c.kind === 'float' };
}

function srcColOf(table: GenTable, c: GenColumn): SrcCol {
  switch (c.kind) {
    case 'smallint':
    case 'int':
      return { name: c.name, kind: 'int', safe: true, wide: false, huge: false };
    case 'bigint':
      return { name: c.name, kind: 'int', safe: true, wide: true, huge: false };
    case 'huge':
      return { name: c.name, kind: 'int', safe: true, wide: true, huge: true };
    case 'double':
    case 'numeric':
      return { name: c.name, kind: 'float', safe: true, wide: false, huge: false };
    case 'text':
    case 'varchar':
      return { name: c.name, kind: 'text', safe: true, wide: false, huge: false };
    case 'bool':
      return { name: c.name, kind: 'bool', safe: true, wide: false, huge: false };
    case 'date':
      return { name: c.name, kind: 'date', safe: true, wide: false, huge: false };
    case 'timestamp':
      void table;
      return { name: c.name, kind: 'ts', safe: true, wide: false, huge: false };
  }
}

export function relOfTable(t: GenTable): Rel {
  return { name: t.name, cols: t.columns.map((c) => srcColOf(t, c)), depth: 0 };
}

class ExprGen {
  constructor(
    private readonly rng: Rng,
    private readonly rel: Rel,
    /**
     * When set, expressions are sometimes wrapped in a named function that SQLite computes the same
     * way (REPLACE, TRIM/LTRIM/RTRIM, STRPOS as INSTR, SIGN, TRUNC). Those choices come from this
     * separate stream, so the main one — and every recorded seed — is the same with or without it.
     */
    private readonly fns?: Rng,
  ) {}

  private textFn(e: GExpr): GExpr {
    const f = this.fns;
    if (f === undefined || !f.chance(0.5)) return e;
    return f.pick([
      () =>
        ex(
          `REPLACE(${e.sql}, '${f.pick(['a', 'e', 'o', 'ab', '_'])}', '${f.pick(['', 'x', 'zz'])}')`,
          'text',
        ),
      () => ex(`TRIM(${e.sql}, '${f.pick(['a', 'ab', 'e_', 'lo'])}')`, 'text'),
      () => ex(`LTRIM(${e.sql}, '${f.pick(['a', 'ab', 'b', 'x'])}')`, 'text'),
      () => ex(`RTRIM(${e.sql}, '${f.pick(['e', 'ta', '1', 'o'])}')`, 'text'),
      () => ex(`TRIM(${e.sql})`, 'text'),
    ])();
  }

  private intFn(e: GExpr): GExpr {
    const f = this.fns;
    const dated = f === undefined ? undefined : this.dateInt(f);
    if (dated !== undefined) {
      return ex(`(${e.sql} + ${dated})`, 'int', [e], { safe: e.safe });
    }
    const texts = this.cols((c) => c.kind === 'text');
    if (f === undefined || texts.length === 0 || !f.chance(0.3)) return e;
    const t = f.pick(texts).name;
    // STRPOS is an integer in [0, length]: the sum stays small, integral and division-safe.
    return ex(`(${e.sql} + STRPOS(${t}, '${f.pick(['a', 'e', 'ab', '_'])}'))`, 'int', [e], {
      safe: e.safe,
    });
  }

  /**
   * Sometimes an integer from date arithmetic and fields: date_part of a date or a timestamp (moved
   * by an INTERVAL of days or hours), date - date, date + integer. The oracle runs SQLite's date
   * functions in their place (sqlite-time.ts); the results are small integers.
   */
  private dateInt(f: Rng): string | undefined {
    const stamps = this.cols((c) => c.kind === 'date' || c.kind === 'ts');
    if (stamps.length === 0 || !f.chance(0.3)) return undefined;
    const dates = this.cols((c) => c.kind === 'date');
    const c = f.pick(stamps);
    const units =
      c.kind === 'ts'
        ? ['year', 'month', 'day', 'dow', 'doy', 'hour']
        : ['year', 'month', 'day', 'dow', 'doy'];
    const moved =
      c.kind === 'ts' && f.chance(0.5)
        ? `(${c.name} + INTERVAL '${f.int(-40, 40)} ${f.pick(['days', 'hours'])}')`
        : c.name;
    if (dates.length === 0 || f.chance(0.5))
      return `CAST(date_part('${f.pick(units)}', ${moved}) AS INTEGER)`;
    const d = f.pick(dates).name;
    if (f.chance(0.5)) {
      const other = f.chance(0.5) ? f.pick(dates).name : `'${randomDate(f)}'`;
      return `(CAST(${d} AS DATE) - CAST(${other} AS DATE))`;
    }
    return `CAST(date_part('${f.pick(['day', 'month', 'dow'])}', (CAST(${d} AS DATE) + ${f.int(-40, 40)})) AS INTEGER)`;
  }

  private floatFn(e: GExpr): GExpr {
    const f = this.fns;
    if (f === undefined || !f.chance(0.3)) return e;
    // Both keep an exact multiple of 1/4 exact (TRUNC and SIGN give integers).
    return ex(`${f.pick(['SIGN', 'TRUNC'])}(${e.sql})`, 'float', [e], { dyadic: true });
  }

  private cols(pred: (c: SrcCol) => boolean): SrcCol[] {
    return this.rel.cols.filter(pred);
  }

  /** An integer expression; `safe` demands a division-safe result, huge columns never appear. */
  int(depth: number, safe = false): GExpr {
    return this.intFn(this.intBase(depth, safe));
  }

  private intBase(depth: number, safe: boolean): GExpr {
    const r = this.rng;
    const leaves = this.cols((c) => c.kind === 'int' && !c.huge && (!safe || c.safe));
    const leaf = (): GExpr =>
      leaves.length > 0 && r.chance(0.85) ? colExpr(r.pick(leaves)) : ex(String(r.int(-5, 20)), 'int');
    if (depth <= 0 || r.chance(0.35)) return leaf();
    const d = depth - 1;
    const choice = r.int(0, 11);
    switch (choice) {
      case 0: {
        const a = this.int(d, safe);
        const b = this.int(d, safe);
        return ex(`(${a.sql} + ${b.sql})`, 'int', [a, b]);
      }
      case 1: {
        const a = this.int(d, safe);
        const b = this.int(d, safe);
        return ex(`(${a.sql} - ${b.sql})`, 'int', [a, b]);
      }
      case 2: {
        const a = this.int(d, safe);
        return ex(`(${a.sql} * ${r.int(-3, 5)})`, 'int', [a]);
      }
      case 3: {
        const a = this.int(d, true);
        return ex(`(${a.sql} / ${r.pick([2, 3, 5, -4, 7, 10])})`, 'int', [a]);
      }
      case 4: {
        const a = this.int(d, true);
        return ex(`(${a.sql} % ${r.pick([2, 3, 5, 7])})`, 'int', [a]);
      }
      case 5: {
        const a = this.int(d, safe);
        return ex(`ABS(${a.sql})`, 'int', [a]);
      }
      case 6: {
        const p = this.bool(d);
        const a = this.int(d, safe);
        const b = this.int(d, safe);
        return ex(`(CASE WHEN ${p.sql} THEN ${a.sql} ELSE ${b.sql} END)`, 'int', [a, b]);
      }
      case 7: {
        const a = this.int(d, safe);
        return ex(`COALESCE(${a.sql}, ${r.int(-3, 9)})`, 'int', [a]);
      }
      case 8: {
        const a = this.int(d, safe);
        return ex(`NULLIF(${a.sql}, ${r.int(0, 5)})`, 'int', [a]);
      }
      case 9: {
        const t = this.text(d);
        return ex(`LENGTH(${t.sql})`, 'int');
      }
      case 10: {
        const b = this.bool(d);
        return ex(`CAST(${b.sql} AS INTEGER)`, 'int');
      }
      default: {
        const a = this.int(d, safe);
        return ex(`(-(${a.sql}))`, 'int', [a]);
      }
    }
  }

  float(depth: number): GExpr {
    return this.floatFn(this.floatBase(depth));
  }

  private floatBase(depth: number): GExpr {
    const r = this.rng;
    const leaves = this.cols((c) => c.kind === 'float');
    const leaf = (): GExpr => {
      if (leaves.length > 0 && r.chance(0.8)) return colExpr(r.pick(leaves));
      const ints = this.cols((c) => c.kind === 'int' && !c.huge && c.safe);
      if (ints.length > 0 && r.chance(0.7)) {
        const c = colExpr(r.pick(ints));
        return ex(`CAST(${c.sql} AS DOUBLE PRECISION)`, 'float', [], { dyadic: true });
      }
      return ex(r.pick(['0.5', '1.25', '-2.75', '10.0']), 'float', [], { dyadic: true });
    };
    if (depth <= 0 || r.chance(0.35)) return leaf();
    const d = depth - 1;
    switch (r.int(0, 9)) {
      case 0: {
        const a = this.float(d);
        const b = this.float(d);
        return ex(`(${a.sql} + ${b.sql})`, 'float', [a, b]);
      }
      case 1: {
        const a = this.float(d);
        const b = this.float(d);
        return ex(`(${a.sql} - ${b.sql})`, 'float', [a, b]);
      }
      case 2: {
        const a = this.float(d);
        return ex(`(${a.sql} * ${r.pick(['0.5', '2', '-1.5', '4'])})`, 'float', [a]);
      }
      case 3: {
        const a = this.float(d);
        return ex(`(${a.sql} / ${r.pick(['4.0', '2.0', '-8.0'])})`, 'float', [a]);
      }
      case 4: {
        const a = this.int(d);
        return ex(`(${a.sql} * 0.25)`, 'float', [a], { dyadic: true });
      }
      case 5: {
        const a = this.float(d);
        return ex(`ABS(${a.sql})`, 'float', [a]);
      }
      case 6: {
        const a = this.float(d);
        const fn = r.pick(['FLOOR', 'CEIL']);
        return ex(`${fn}(${a.sql})`, 'float', [a]);
      }
      case 7: {
        const a = this.float(d);
        // ROUND of a value a tenth away from any .5 tie (see the file header).
        if (!a.dyadic) return a;
        return ex(`ROUND(${a.sql} + 0.1)`, 'float', [a], { dyadic: false });
      }
      case 8: {
        const a = this.float(d);
        return ex(`COALESCE(${a.sql}, ${r.pick(['0.0', '-1.5'])})`, 'float', [a]);
      }
      default: {
        const p = this.bool(d);
        const a = this.float(d);
        const b = this.float(d);
        return ex(`(CASE WHEN ${p.sql} THEN ${a.sql} ELSE ${b.sql} END)`, 'float', [a, b]);
      }
    }
  }

  text(depth: number): GExpr {
    return this.textFn(this.textBase(depth));
  }

  private textBase(depth: number): GExpr {
    const r = this.rng;
    const leaves = this.cols((c) => c.kind === 'text');
    const leaf = (): GExpr =>
      leaves.length > 0 && r.chance(0.85) ? colExpr(r.pick(leaves)) : ex(`'${r.pick(WORDS)}'`, 'text');
    if (depth <= 0 || r.chance(0.35)) return leaf();
    const d = depth - 1;
    switch (r.int(0, 8)) {
      case 0:
        return ex(`LOWER(${this.text(d).sql})`, 'text');
      case 1:
        return ex(`UPPER(${this.text(d).sql})`, 'text');
      case 2:
        return ex(`SUBSTRING(${this.text(d).sql}, ${r.int(1, 3)}, ${r.int(1, 3)})`, 'text');
      case 3:
        return ex(`(${this.text(d).sql} || '${r.pick(['x', '_', '-'])}')`, 'text');
      case 4:
        return ex(`(${this.text(d).sql} || ${this.text(d).sql})`, 'text');
      case 5:
        return ex(`COALESCE(${this.text(d).sql}, 'none')`, 'text');
      case 6:
        return ex(`NULLIF(${this.text(d).sql}, '${r.pick(WORDS)}')`, 'text');
      case 7:
        return ex(`CAST(${this.int(d, true).sql} AS TEXT)`, 'text');
      default:
        return ex(`(CASE WHEN ${this.bool(d).sql} THEN 'lo' ELSE ${this.text(d).sql} END)`, 'text');
    }
  }

  /** A predicate. */
  bool(depth: number): GExpr {
    const r = this.rng;
    const d = Math.max(0, depth - 1);
    const cmp = (): string => r.pick(['=', '<>', '<', '<=', '>', '>=']);
    const choices: (() => GExpr)[] = [
      () => ex(`(${this.int(d).sql} ${cmp()} ${r.int(-5, 30)})`, 'bool'),
      () => ex(`(${this.int(d).sql} ${cmp()} ${this.int(d).sql})`, 'bool'),
      () => ex(`(${this.float(d).sql} ${cmp()} ${r.pick(['0', '2.5', '10', '-1.25'])})`, 'bool'),
      () => ex(`(${this.text(d).sql} ${cmp()} '${r.pick(WORDS)}')`, 'bool'),
      () => {
        const e = this.anyExpr(d);
        return ex(`(${e.sql} IS ${r.chance(0.5) ? 'NOT ' : ''}NULL)`, 'bool');
      },
      () => {
        const lo = r.int(-10, 20);
        return ex(
          `(${this.int(d).sql} ${r.chance(0.3) ? 'NOT ' : ''}BETWEEN ${lo} AND ${lo + r.int(0, 30)})`,
          'bool',
        );
      },
      () => {
        const list = Array.from({ length: r.int(1, 4) }, () => r.int(-2, 12)).join(', ');
        return ex(`(${this.int(d).sql} ${r.chance(0.3) ? 'NOT ' : ''}IN (${list}))`, 'bool');
      },
      () => {
        const list = Array.from({ length: r.int(1, 3) }, () => `'${r.pick(WORDS)}'`).join(', ');
        return ex(`(${this.text(d).sql} ${r.chance(0.3) ? 'NOT ' : ''}IN (${list}))`, 'bool');
      },
      () => {
        const pat = r.pick(['a%', '%a', '%an%', '_b%', 'b_', '%', 'A%', 'x_', '%_b']);
        return ex(`(${this.text(d).sql} ${r.chance(0.3) ? 'NOT ' : ''}LIKE '${pat}')`, 'bool');
      },
      () => ex(`(${this.bool(d).sql} AND ${this.bool(d).sql})`, 'bool'),
      () => ex(`(${this.bool(d).sql} OR ${this.bool(d).sql})`, 'bool'),
      () => ex(`(NOT ${this.bool(d).sql})`, 'bool'),
    ];
    const bools = this.cols((c) => c.kind === 'bool');
    if (bools.length > 0) {
      choices.push(() => colExpr(r.pick(bools)));
      choices.push(() => ex(`(${r.pick(bools).name} = ${r.pick(['TRUE', 'FALSE'])})`, 'bool'));
    }
    const dates = this.cols((c) => c.kind === 'date');
    if (dates.length > 0) {
      choices.push(() => ex(`(${r.pick(dates).name} ${cmp()} '${randomDate(r)}')`, 'bool'));
      choices.push(() => {
        const a = randomDate(r);
        const b = randomDate(r);
        const [lo, hi] = a < b ? [a, b] : [b, a];
        return ex(`(${r.pick(dates).name} BETWEEN '${lo}' AND '${hi}')`, 'bool');
      });
    }
    const tss = this.cols((c) => c.kind === 'ts');
    if (tss.length > 0) {
      choices.push(() => ex(`(${r.pick(tss).name} ${cmp()} '${randomDate(r)} 12:00:00')`, 'bool'));
    }
    const huges = this.cols((c) => c.huge);
    if (huges.length > 0) {
      choices.push(() => ex(`(${r.pick(huges).name} ${r.pick(['>', '<', '>=', '<='])} 0)`, 'bool'));
    }
    if (depth <= 0) return choices[r.int(0, 8)]!();
    return r.pick(choices)();
  }

  /** Any expression of any kind: a bare column (huge allowed) or a computed value. */
  anyExpr(depth: number): GExpr {
    const r = this.rng;
    if (r.chance(0.4)) return colExpr(r.pick(this.rel.cols));
    switch (r.int(0, 3)) {
      case 0:
        return this.int(depth);
      case 1:
        return this.float(depth);
      case 2:
        return this.text(depth);
      default:
        return this.bool(depth);
    }
  }

  /** A grouping key: mostly low-cardinality columns or expressions. */
  groupKey(): GExpr {
    const r = this.rng;
    const low = this.cols((c) => c.kind !== 'float' || this.rel.depth > 0);
    const floats = this.cols((c) => c.kind === 'float');
    if (floats.length > 0 && r.chance(0.12)) {
      // Float keys, including -0 next to 0 (CEIL(-0.25) is -0): SQL groups them together.
      const f = r.pick(floats).name;
      return ex(
        r.pick([`CEIL(${f})`, `FLOOR(${f} / 2.0)`, `(${f} * -1)`, `ROUND(${f} / 8.0 + 0.1)`]),
        'float',
      );
    }
    switch (r.int(0, 6)) {
      case 0:
      case 1:
      case 2:
        return colExpr(r.pick(low.length > 0 ? low : this.rel.cols));
      case 3: {
        const a = this.int(0, true);
        return ex(`(${a.sql} % ${r.pick([3, 4, 5])})`, 'int', [a]);
      }
      case 4:
        return ex(`SUBSTRING(${this.text(0).sql}, 1, 1)`, 'text');
      case 5: {
        const dates = this.cols((c) => c.kind === 'date' || c.kind === 'ts');
        if (dates.length > 0) return ex(`SUBSTRING(CAST(${r.pick(dates).name} AS TEXT), 1, 7)`, 'text');
        return this.bool(0);
      }
      default:
        return this.bool(1);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Views

export interface GenView {
  readonly name: string;
  /** The SELECT text, valid in both Sluice and SQLite. */
  readonly select: string;
  readonly template: string;
  readonly source: string;
  readonly depth: number;
}

interface Agg {
  readonly sql: string;
  readonly out: Omit<SrcCol, 'name'>;
}

function aggregate(g: ExprGen, rng: Rng, rel: Rel): Agg {
  const intOut = (safe: boolean, wide: boolean, huge = false): Omit<SrcCol, 'name'> => ({
    kind: 'int',
    safe,
    wide,
    huge,
  });
  const of = (kind: EKind): Omit<SrcCol, 'name'> => ({ kind, safe: true, wide: false, huge: false });
  switch (rng.int(0, 10)) {
    case 0:
      return { sql: 'COUNT(*)', out: intOut(true, true) };
    case 1:
      return { sql: `COUNT(${g.anyExpr(1).sql})`, out: intOut(true, true) };
    case 2:
      return { sql: `COUNT(DISTINCT ${g.anyExpr(1).sql})`, out: intOut(true, true) };
    case 3: {
      const a = g.int(2);
      // PostgreSQL: SUM(int) is bigint, SUM(bigint) is numeric (a float in Sluice).
      const distinct = rng.chance(0.25) ? 'DISTINCT ' : '';
      return { sql: `SUM(${distinct}${a.sql})`, out: a.wide ? of('float') : intOut(a.safe, true) };
    }
    case 4:
      return { sql: `SUM(${rng.chance(0.25) ? 'DISTINCT ' : ''}${g.float(2).sql})`, out: of('float') };
    case 5: {
      const distinct = rng.chance(0.25) ? 'DISTINCT ' : '';
      return { sql: `AVG(${distinct}${rng.chance(0.5) ? g.int(1).sql : g.float(1).sql})`, out: of('float') };
    }
    case 6:
    case 7: {
      const fn = rng.pick(['MIN', 'MAX']);
      const cands = rel.cols.filter((c) => c.kind !== 'bool');
      if (cands.length > 0 && rng.chance(0.6)) {
        const c = rng.pick(cands);
        return { sql: `${fn}(${c.name})`, out: { kind: c.kind, safe: c.safe, wide: c.wide, huge: c.huge } };
      }
      const e = rng.pick([() => g.int(1), () => g.float(1), () => g.text(1)])();
      return { sql: `${fn}(${e.sql})`, out: { kind: e.kind, safe: e.safe, wide: e.wide, huge: false } };
    }
    case 8:
      return { sql: `SUM(CASE WHEN ${g.bool(1).sql} THEN 1 ELSE 0 END)`, out: intOut(true, true) };
    case 9:
      return { sql: `MAX(${g.text(1).sql})`, out: of('text') };
    default:
      return { sql: `COUNT(DISTINCT ${g.groupKey().sql})`, out: intOut(true, true) };
  }
}

function havingClause(g: ExprGen, rng: Rng): string {
  const one = (): string =>
    rng.pick([
      () => `COUNT(*) > ${rng.int(0, 3)}`,
      () => `SUM(${g.int(1).sql}) >= ${rng.int(-10, 40)}`,
      () => `MIN(${g.int(0).sql}) IS NOT NULL`,
      () => `COUNT(DISTINCT ${g.anyExpr(0).sql}) > 1`,
      () => `MAX(${g.float(0).sql}) < ${rng.pick(['20', '50.5', '0'])}`,
    ])();
  return rng.chance(0.3) ? `(${one()}) AND (${one()})` : one();
}

interface BuiltView {
  readonly view: GenView;
  readonly rel: Rel;
}

function buildView(rng: Rng, name: string, src: Rel, template: string, fns?: Rng): BuiltView {
  const g = new ExprGen(rng, src, fns);
  const where = (p: number): string => (rng.chance(p) ? ` WHERE ${g.bool(2).sql}` : '');
  const outCol = (name: string, e: GExpr | Omit<SrcCol, 'name'>): SrcCol => ({
    name,
    kind: e.kind,
    safe: e.safe,
    wide: e.wide,
    huge: e.huge,
  });
  let select: string;
  const cols: SrcCol[] = [];
  switch (template) {
    case 'project': {
      if (rng.chance(0.1)) {
        // SELECT *: the view has exactly its source's columns.
        select = `SELECT * FROM ${src.name}${where(0.9)}`;
        cols.push(...src.cols);
        break;
      }
      const items: string[] = [];
      const n = rng.int(1, 4);
      for (let i = 0; i < n; i++) {
        const e = rng.chance(0.3) ? colExpr(rng.pick(src.cols)) : g.anyExpr(2);
        items.push(`${e.sql} AS c${i}`);
        cols.push(outCol(`c${i}`, e));
      }
      select = `SELECT ${items.join(', ')} FROM ${src.name}${where(0.8)}`;
      break;
    }
    case 'distinct': {
      const items: string[] = [];
      const n = rng.int(1, 3);
      for (let i = 0; i < n; i++) {
        const e = g.groupKey();
        items.push(`${e.sql} AS d${i}`);
        cols.push(outCol(`d${i}`, e));
      }
      select = `SELECT DISTINCT ${items.join(', ')} FROM ${src.name}${where(0.5)}`;
      break;
    }
    case 'group':
    case 'global': {
      const keys: GExpr[] = [];
      if (template === 'group') {
        const nk = rng.int(1, 2);
        for (let i = 0; i < nk; i++) keys.push(g.groupKey());
      }
      const items: string[] = [];
      // Sometimes the group keys are not selected: the output is then a multiset without a key.
      const hideKeys = template === 'group' && rng.chance(0.15);
      if (!hideKeys) {
        keys.forEach((k, i) => {
          items.push(`${k.sql} AS g${i}`);
          cols.push(outCol(`g${i}`, k));
        });
      }
      const na = rng.int(1, 4);
      for (let i = 0; i < na; i++) {
        const a = aggregate(g, rng, src);
        items.push(`${a.sql} AS a${i}`);
        cols.push(outCol(`a${i}`, a.out));
      }
      const groupBy = keys.length > 0 ? ` GROUP BY ${keys.map((k) => k.sql).join(', ')}` : '';
      // HAVING mostly with GROUP BY; without it, it keeps or drops the single global row.
      const having = rng.chance(template === 'group' ? 0.3 : 0.1) ? ` HAVING ${havingClause(g, rng)}` : '';
      const distinct = template === 'group' && rng.chance(0.1) ? 'DISTINCT ' : '';
      select = `SELECT ${distinct}${items.join(', ')} FROM ${src.name}${where(0.4)}${groupBy}${having}`;
      break;
    }
    case 'sum-per-key': {
      // The first half of "Double 11": a per-key total.
      const key = g.groupKey();
      const ints = src.cols.filter((c) => c.kind === 'int' && c.safe && !c.huge && !c.wide);
      const amount = ints.length > 0 ? rng.pick(ints).name : g.int(1, true).sql;
      select = `SELECT ${key.sql} AS k, SUM(${amount}) AS total, COUNT(*) AS n FROM ${src.name}${where(0.3)} GROUP BY ${key.sql}`;
      cols.push(outCol('k', key));
      cols.push({ name: 'total', kind: 'int', safe: true, wide: true, huge: false });
      cols.push({ name: 'n', kind: 'int', safe: true, wide: true, huge: false });
      break;
    }
    case 'histogram': {
      // The second half of "Double 11": how many keys fall in each bucket of a numeric column.
      const nums = src.cols.filter((c) => (c.kind === 'int' && c.safe && !c.huge) || c.kind === 'float');
      const c = nums.length > 0 ? rng.pick(nums) : undefined;
      const x = c === undefined ? g.int(1, true) : colExpr(c);
      const div = x.kind === 'float' ? '10.0' : '10';
      const bucket = `FLOOR(${x.sql} / ${div})`;
      select = `SELECT ${bucket} AS bucket, COUNT(*) AS sellers FROM ${src.name} GROUP BY ${bucket}`;
      cols.push({ name: 'bucket', kind: 'float', safe: false, wide: false, huge: false });
      cols.push({ name: 'sellers', kind: 'int', safe: true, wide: true, huge: false });
      break;
    }
    default:
      throw new Error(`unknown template ${template}`);
  }
  return {
    view: { name, select, template, source: src.name, depth: src.depth + 1 },
    rel: { name, cols, depth: src.depth + 1 },
  };
}

export interface Scenario {
  readonly tables: readonly GenTable[];
  readonly views: readonly GenView[];
}

const TEMPLATES: readonly (readonly [number, string])[] = [
  [3, 'project'],
  [2, 'distinct'],
  [5, 'group'],
  [2, 'global'],
  [1, 'sum-per-key'],
  [1, 'histogram'],
];

/** Tables plus 3–8 views, always including a 2–3 deep "Double 11" chain over a per-key SUM. */
export function randomScenario(
  rng: Rng,
  options: { minViews?: number; maxViews?: number; functions?: Rng } = {},
): Scenario {
  const fns = options.functions;
  const tables: GenTable[] = [randomTable(rng, 't0')];
  if (rng.chance(0.35)) tables.push(randomTable(rng, 't1'));
  const rels: Rel[] = tables.map(relOfTable);
  const views: GenView[] = [];
  const add = (b: BuiltView): Rel => {
    views.push(b.view);
    rels.push(b.rel);
    return b.rel;
  };
  const nViews = rng.int(options.minViews ?? 3, options.maxViews ?? 8);
  // The chain: per-key SUM → histogram → (sometimes) an aggregate or filter over the histogram.
  const base = rng.pick(rels.slice(0, tables.length));
  const totals = add(buildView(rng, `v${views.length}`, base, 'sum-per-key', fns));
  const hist = add(buildView(rng, `v${views.length}`, totals, 'histogram', fns));
  if (nViews >= 3 && rng.chance(0.6)) {
    add(buildView(rng, `v${views.length}`, hist, rng.pick(['global', 'project', 'group']), fns));
  }
  while (views.length < nViews) {
    const src = rng.chance(0.35) ? rng.pick(rels) : rng.pick(rels.slice(0, tables.length));
    const template = rng.weighted(
      src.depth >= 3 ? TEMPLATES.filter(([, t]) => t !== 'histogram') : TEMPLATES,
    );
    add(buildView(rng, `v${views.length}`, src, template, fns));
  }
  return { tables, views };
}

// ---------------------------------------------------------------------------------------------------
// Data

function keyOf(table: GenTable, row: Row): string {
  const pk = table.primaryKey ?? table.columns.map((c) => c.name);
  return JSON.stringify(pk.map((k) => String(row[k])));
}

/** The current rows of one table, as the generator believes them to be (a multiset). */
export class TableModel {
  readonly rows: Row[] = [];
  /** Key (primary key, or the full row for keyless tables) → indexes in rows. */
  private readonly byKey = new Map<string, number[]>();
  private nextId = 1;

  constructor(readonly table: GenTable) {}

  get keyed(): boolean {
    return this.table.primaryKey !== null;
  }

  key(row: Row): string {
    return keyOf(this.table, row);
  }

  freshRow(rng: Rng): Row {
    const row: Row = {};
    for (const c of this.table.columns) row[c.name] = randomValue(rng, c);
    if (this.keyed) {
      row['id'] = this.nextId++;
      if (this.table.primaryKey?.includes('region')) row['region'] = rng.pick(['eu', 'us', 'ap']);
    }
    return row;
  }

  /** A modified copy of `row`: one or two non-key columns get new values. */
  modified(rng: Rng, row: Row): Row {
    const out: Row = { ...row };
    const pk = new Set(this.table.primaryKey ?? []);
    const cols = this.table.columns.filter((c) => !pk.has(c.name));
    const n = rng.int(1, 2);
    for (let i = 0; i < n; i++) {
      const c = rng.pick(cols);
      out[c.name] = randomValue(rng, c);
    }
    return out;
  }

  private indexAdd(k: string, i: number): void {
    const list = this.byKey.get(k);
    if (list === undefined) this.byKey.set(k, [i]);
    else list.push(i);
  }

  private indexReplace(k: string, from: number, to: number): void {
    const list = this.byKey.get(k);
    const at = list?.indexOf(from) ?? -1;
    if (list === undefined || at < 0) throw new Error('TableModel: index out of sync');
    list[at] = to;
  }

  private remove(k: string): void {
    const list = this.byKey.get(k);
    const i = list?.pop();
    if (list === undefined || i === undefined) throw new Error(`TableModel: delete of missing row ${k}`);
    if (list.length === 0) this.byKey.delete(k);
    const last = this.rows.pop();
    if (last === undefined) throw new Error('TableModel: remove from empty');
    if (i < this.rows.length) {
      this.rows[i] = last;
      this.indexReplace(this.key(last), this.rows.length, i);
    }
  }

  /** Replaces the model's rows (after SQL statements changed the table, from the oracle's copy). */
  reset(rows: readonly Row[]): void {
    this.rows.length = 0;
    this.byKey.clear();
    this.apply({ insert: rows });
  }

  /** Applies a batch with the engine's semantics: deletes (full row or key), then inserts (upsert). */
  apply(changes: Changes): void {
    for (const d of changes.delete ?? []) this.remove(this.key(d));
    for (const ins of changes.insert ?? []) {
      const k = this.key(ins);
      if (this.keyed) {
        const i = this.byKey.get(k)?.[0];
        if (i !== undefined) {
          this.rows[i] = ins;
          continue;
        }
        const id = ins['id'];
        if (typeof id === 'number' && id >= this.nextId) this.nextId = id + 1;
      }
      this.indexAdd(k, this.rows.length);
      this.rows.push(ins);
    }
  }
}

function pkOnly(table: GenTable, row: Row): Row {
  const out: Row = {};
  for (const k of table.primaryKey ?? []) out[k] = row[k] ?? null;
  return out;
}

/** Batch size: mostly small, sometimes hundreds, rarely thousands. */
export function randomBatchSize(rng: Rng, scale = 1): number {
  return rng.weighted<() => number>([
    [70, () => rng.int(1, 10)],
    [20, () => rng.int(10, 150)],
    [8, () => rng.int(150, 800)],
    [2 * scale, () => rng.int(1000, 3000)],
  ])();
}

/**
 * One valid batch against the model's current rows (does not apply it). `target` is the table size
 * the workload drifts towards: above it, deletes dominate.
 */
export function randomBatch(rng: Rng, model: TableModel, size: number, target = 400): Changes {
  const insert: Row[] = [];
  const del: Row[] = [];
  const n = model.rows.length;
  const pDelete = n === 0 ? 0 : n > target ? 0.55 : 0.2;
  const pUpdate = n === 0 ? 0 : 0.25;
  // Distinct rows (by index) of the pre-batch state, each touched at most once in this batch.
  const order = Array.from({ length: n }, (_, i) => i);
  let cursor = 0;
  const takeExisting = (): Row | undefined => {
    if (cursor >= order.length) return undefined;
    const j = cursor + Math.floor(rng.next() * (order.length - cursor));
    const tmp = order[cursor]!;
    order[cursor] = order[j]!;
    order[j] = tmp;
    return model.rows[order[cursor++]!];
  };
  for (let i = 0; i < size; i++) {
    const r = rng.next();
    if (r < pDelete) {
      const row = takeExisting();
      if (row === undefined) continue;
      del.push(model.keyed && rng.chance(0.5) ? pkOnly(model.table, row) : row);
    } else if (r < pDelete + pUpdate) {
      const row = takeExisting();
      if (row === undefined) continue;
      const next = model.modified(rng, row);
      if (model.keyed && rng.chance(0.5)) {
        insert.push(next); // upsert: replaces the row with the same key
      } else {
        del.push(model.keyed && rng.chance(0.5) ? pkOnly(model.table, row) : row);
        insert.push(next);
      }
    } else if (!model.keyed && n > 0 && rng.chance(0.1)) {
      // An exact duplicate of an existing row (multiplicity > 1 in keyless tables).
      insert.push({ ...model.rows[rng.int(0, n - 1)]! });
    } else {
      insert.push(model.freshRow(rng));
    }
  }
  if (insert.length === 0 && del.length === 0) insert.push(model.freshRow(rng));
  const out: { insert?: Row[]; delete?: Row[] } = {};
  if (insert.length > 0) out.insert = insert;
  if (del.length > 0) out.delete = del;
  return out;
}

/** A printable form of a batch (bigint-safe), for failure messages. */
export function describeBatch(table: string, changes: Changes, limit = 8): string {
  const j = (r: Row): string => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  const ins = changes.insert ?? [];
  const del = changes.delete ?? [];
  const lines = [`batch on ${table}: ${ins.length} inserts, ${del.length} deletes`];
  for (const r of del.slice(0, limit)) lines.push(`  - ${j(r)}`);
  if (del.length > limit) lines.push(`  - ... ${del.length - limit} more`);
  for (const r of ins.slice(0, limit)) lines.push(`  + ${j(r)}`);
  if (ins.length > limit) lines.push(`  + ... ${ins.length - limit} more`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------
// SQL statements (INSERT / UPDATE / DELETE) as an alternative way into a table

/** A SQL literal for a generated value (text quoted, booleans TRUE/FALSE). */
export function sqlLiteral(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return `'${v.replace(/'/g, "''")}'`;
  return String(v);
}

/** One INSERT, UPDATE or DELETE statement, valid in Sluice and SQLite, never touching key columns. */
export function randomDml(rng: Rng, model: TableModel): string {
  const t = model.table;
  const kind = rng.weighted<'insert' | 'update' | 'delete'>([
    [3, 'insert'],
    [4, 'update'],
    [model.rows.length > 50 ? 3 : 1, 'delete'],
  ]);
  if (kind === 'insert') {
    const rows = Array.from({ length: rng.int(1, 5) }, () => model.freshRow(rng));
    const cols = t.columns.map((c) => c.name);
    const values = rows.map((r) => `(${cols.map((c) => sqlLiteral(r[c] ?? null)).join(', ')})`);
    return `INSERT INTO ${t.name} (${cols.join(', ')}) VALUES ${values.join(', ')}`;
  }
  const g = new ExprGen(rng, relOfTable(t));
  const where = rng.chance(0.9) ? ` WHERE ${g.bool(1).sql}` : '';
  if (kind === 'delete') return `DELETE FROM ${t.name}${where}`;
  const pk = new Set(t.primaryKey ?? []);
  const cols = t.columns.filter((c) => !pk.has(c.name) && c.kind !== 'huge');
  const sets = Array.from({ length: rng.int(1, 2) }, () => rng.pick(cols))
    .filter((c, i, xs) => xs.indexOf(c) === i)
    .map((c) => {
      const fresh = (): string => sqlLiteral(randomValue(rng, { ...c, nullable: false }));
      switch (c.kind) {
        case 'smallint':
        case 'int':
        case 'bigint':
          return `${c.name} = ${rng.chance(0.6) ? `${c.name} + ${rng.int(-3, 5)}` : fresh()}`;
        case 'double':
        case 'numeric':
          return `${c.name} = ${rng.chance(0.6) ? `${c.name} + ${rng.pick(['0.25', '-1.5', '3'])}` : fresh()}`;
        case 'text':
        case 'varchar':
          return `${c.name} = ${rng.pick([`UPPER(${c.name})`, `LOWER(${c.name})`, `SUBSTRING(${c.name}, 1, 2)`, fresh()])}`;
        case 'bool':
          return `${c.name} = ${rng.chance(0.6) ? `NOT ${c.name}` : fresh()}`;
        default:
          return `${c.name} = ${c.nullable && rng.chance(0.2) ? 'NULL' : fresh()}`;
      }
    });
  return `UPDATE ${t.name} SET ${sets.join(', ')}${where}`;
}

/** SQLite's row values back in Sluice's representation, for TableModel.reset. */
export function fromSqliteRow(t: GenTable, r: Record<string, unknown>): Row {
  const out: Row = {};
  for (const c of t.columns) {
    const v = r[c.name];
    if (v === null || v === undefined) out[c.name] = null;
    else if (c.kind === 'bool') out[c.name] = v === 1n || v === 1;
    else if (typeof v === 'bigint') {
      out[c.name] =
        c.kind === 'double' || c.kind === 'numeric'
          ? Number(v)
          : v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
            ? Number(v)
            : v;
    } else out[c.name] = v as Value;
  }
  return out;
}
