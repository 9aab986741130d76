// Seeded random SQL expressions over a relation's columns, for the views of the differential and
// property suites (random-views.ts). Every choice comes from the seed's one stream (random-workload.ts).
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
import { WORDS, randomDate, type GenColumn, type GenTable, type Rng } from './random-workload.ts';

// ---------------------------------------------------------------------------------------------------
// Expressions

export type EKind = 'int' | 'float' | 'text' | 'bool' | 'date' | 'ts';

/** A column of a relation (table or view) that expressions can reference. */
export interface SrcCol {
  readonly name: string;
  readonly kind: EKind;
  /** int only: SQLite holds an integer and PostgreSQL types it as an integer (division-safe). */
  readonly safe: boolean;
  /** int only: PostgreSQL type is bigint (SUM of it is numeric). */
  readonly wide: boolean;
  /** bigint near ±2^62: no arithmetic on it. */
  readonly huge: boolean;
}

export interface Rel {
  readonly name: string;
  readonly cols: readonly SrcCol[];
  /** 0 for a table, 1 + the source's depth for a view. */
  readonly depth: number;
}

export interface GExpr {
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

export function colExpr(c: SrcCol): GExpr {
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

export class ExprGen {
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
