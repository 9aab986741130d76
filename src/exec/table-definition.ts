// What CREATE TABLE and CREATE SOURCE define, validated into a table's shape: columns and their
// types, the primary key, column DEFAULTs (typed constant expressions) and UNIQUE constraints; and
// the errors relation a source with on_error 'skip' writes.

import { notSupported, SluiceError } from '../common/errors.ts';
import type { ColumnDef, Statement } from '../parser/ast.ts';
import { castValue, fitLength } from '../common/cast.ts';
import { compileScalar } from '../common/scalar-expr.ts';
import { bindExpr } from '../planner/bind-expr.ts';
import { NOW_FUNCTIONS, clockFunctionType, clockValueAs } from '../planner/bind-time.ts';
import type {
  ColumnDefault,
  ColumnMeta,
  TableDef,
  UniqueConstraint,
  WatermarkDef,
} from '../planner/catalog.ts';
import { watermarkDef } from './table-watermark.ts';
import { resolveTypeName } from '../planner/types-resolve.ts';
import type { Value } from '../common/types.ts';
import { T, typeName, type SqlType } from '../common/types.ts';

/** Columns, primary key, DEFAULTs and UNIQUE constraints of CREATE TABLE / CREATE SOURCE, validated. */
export function tableShape(stmt: Extract<Statement, { kind: 'createTable' | 'createSource' }>): {
  columns: ColumnMeta[];
  primaryKey: number[] | null;
  defaults?: (ColumnDefault | null)[];
  unique?: UniqueConstraint[];
  watermark?: WatermarkDef;
  appendOnly?: true;
} {
  const kind = stmt.kind === 'createTable' ? 'table' : 'source';
  if (kind === 'source') {
    // A source holds what its connector decodes, and only the connector writes it: a constraint it
    // could break would stop the source, and a default would invent values the topic never had.
    const unique = stmt.columns.find((c) => c.unique !== undefined)?.unique ?? stmt.unique?.[0]?.pos;
    if (unique !== undefined) {
      throw notSupported('UNIQUE constraint on a source', unique, 'a source may have a PRIMARY KEY');
    }
    const withDefault = stmt.columns.find((c) => c.default !== undefined);
    if (withDefault?.default !== undefined) {
      throw notSupported('column DEFAULT on a source', withDefault.default.expr.pos);
    }
  }
  if (stmt.columns.length === 0) {
    throw new SluiceError('INVALID_DEFINITION', `${kind} "${stmt.name}" must have at least one column`, {
      position: stmt.pos,
    });
  }
  const seen = new Set<string>();
  for (const c of stmt.columns) {
    if (seen.has(c.name))
      throw new SluiceError('DUPLICATE_COLUMN', `column "${c.name}" specified more than once`, {
        position: c.pos,
      });
    seen.add(c.name);
  }
  const inlinePk = stmt.columns.filter((c) => c.primaryKey).map((c) => c.name);
  if (inlinePk.length > 1 || (inlinePk.length > 0 && stmt.primaryKey !== undefined)) {
    throw new SluiceError(
      'INVALID_DEFINITION',
      `multiple primary keys for ${kind} "${stmt.name}" are not allowed`,
      {
        position: stmt.pos,
      },
    );
  }
  const pkNames = stmt.primaryKey ?? inlinePk;
  const pk: number[] = [];
  for (const name of pkNames) {
    const i = stmt.columns.findIndex((c) => c.name === name);
    if (i < 0) {
      throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" named in key does not exist`, {
        position: stmt.pos,
      });
    }
    if (pk.includes(i))
      throw new SluiceError('DUPLICATE_COLUMN', `column "${name}" appears twice in primary key constraint`, {
        position: stmt.pos,
      });
    pk.push(i);
  }
  const columns: ColumnMeta[] = stmt.columns.map((c, i) => ({
    name: c.name,
    type: resolveTypeName(c.type),
    nullable: !c.notNull && !pk.includes(i),
  }));
  const defaults = stmt.columns.some((c) => c.default !== undefined)
    ? stmt.columns.map((c, i) => columnDefault(c, columns[i] as ColumnMeta))
    : undefined;
  const unique = uniqueConstraints(stmt, pk);
  const watermark = stmt.watermark === undefined ? undefined : watermarkDef(stmt.watermark, columns);
  return {
    columns,
    primaryKey: pk.length > 0 ? pk : null,
    ...(defaults !== undefined ? { defaults } : {}),
    ...(unique.length > 0 ? { unique } : {}),
    ...(watermark !== undefined ? { watermark } : {}),
    ...(stmt.kind === 'createTable' && stmt.appendOnly === true ? { appendOnly: true as const } : {}),
  };
}

/**
 * A column's DEFAULT, bound now: an expression without column references or aggregates (as in
 * PostgreSQL) assigned to the column's type, so a type error is reported at CREATE where it is
 * written. A constant one is computed once (and again, the same, when the journal replays the DDL).
 * One that reads the clock (`DEFAULT now()`) is computed for each batch at its epoch's logical
 * clock, as PostgreSQL takes each transaction's time; the journal keeps the rows with the values
 * filled in, so replay gives the same rows. gen_random_uuid would need a value per row: refused.
 */
function columnDefault(c: ColumnDef, col: ColumnMeta): ColumnDefault | null {
  if (c.default === undefined) return null;
  const { expr, text } = c.default;
  // The clock readings the expression makes, as columns of a row of them (one per type).
  const clockTypes: SqlType[] = [];
  const bound = bindExpr(expr, {
    scope: null,
    aggregateContext: 'DEFAULT expressions',
    intercept: (e) => {
      // One value for every row (and another at replay) would not be PostgreSQL's per-row default.
      if (e.kind === 'function' && e.name === 'gen_random_uuid')
        throw notSupported('GEN_RANDOM_UUID() in a column DEFAULT', e.pos, 'send the uuid with each row');
      if (e.kind === 'function' && NOW_FUNCTIONS.has(e.name) && e.over === undefined) {
        if (e.name === 'mz_now') throw notSupported('MZ_NOW() in a column DEFAULT', e.pos, 'use now()');
        if (e.args.length !== 0) return undefined; // the binder reports the mismatch
        const type = clockFunctionType(e.name, e.pos);
        let index = clockTypes.findIndex((t) => t.kind === type.kind);
        if (index < 0) index = clockTypes.push(type) - 1;
        return { kind: 'col', index, name: e.name, type };
      }
      if (e.kind !== 'column') return undefined;
      throw new SluiceError('INVALID_DEFINITION', 'cannot use column reference in DEFAULT expression', {
        position: e.pos,
      });
    },
  });
  // PostgreSQL's assignment rule: a quoted literal adapts to any type, numbers to numbers, anything
  // to text, date and timestamp to each other; otherwise the default must be cast explicitly.
  const from = expr.kind === 'literal' && expr.literalType === 'string' ? T.unknown : bound.type;
  const numeric = (k: string): boolean => k === 'int' || k === 'float' || k === 'numeric';
  const dateTime = (k: string): boolean => k === 'date' || k === 'timestamp' || k === 'timestamptz';
  const assignable =
    from.kind === 'unknown' ||
    from.kind === col.type.kind ||
    col.type.kind === 'text' ||
    (numeric(from.kind) && numeric(col.type.kind)) ||
    (dateTime(from.kind) && dateTime(col.type.kind));
  if (!assignable) {
    throw new SluiceError(
      'TYPE_MISMATCH',
      `column "${col.name}" is of type ${typeName(col.type)} but default expression is of type ${typeName(bound.type)}`,
      { position: expr.pos, hint: 'you will need to rewrite or cast the expression' },
    );
  }
  const compute = compileScalar(bound);
  const at = (micros: number): Value => {
    try {
      return assignCast(compute(clockTypes.map((t) => clockValueAs(t, micros))), bound.type, col);
    } catch (error) {
      throw asSluiceError(error).at(expr.pos);
    }
  };
  // A clock default is tried once at CREATE (at the Unix epoch) so that an error shows there.
  const value = at(0);
  return clockTypes.length === 0 ? { sql: text, value } : { sql: text, value, atClock: at };
}

/**
 * The UNIQUE constraints written inline and as table constraints, in that order, named as
 * PostgreSQL names them (`<table>_<columns>_key`, a digit appended on a clash). One that repeats the
 * primary key or an earlier constraint is dropped, as PostgreSQL drops it.
 */
function uniqueConstraints(
  stmt: Extract<Statement, { kind: 'createTable' | 'createSource' }>,
  pk: readonly number[],
): UniqueConstraint[] {
  const clauses = [
    ...stmt.columns.flatMap((c) => (c.unique !== undefined ? [{ columns: [c.name], pos: c.unique }] : [])),
    ...(stmt.unique ?? []),
  ];
  const out: UniqueConstraint[] = [];
  const seen = new Set([pk.join(',')]);
  const names = new Set([`${stmt.name}_pkey`]);
  for (const clause of clauses) {
    const columns: number[] = [];
    for (const name of clause.columns) {
      const i = stmt.columns.findIndex((c) => c.name === name);
      if (i < 0) {
        throw new SluiceError('UNKNOWN_COLUMN', `column "${name}" named in key does not exist`, {
          position: clause.pos,
        });
      }
      if (columns.includes(i)) {
        throw new SluiceError('DUPLICATE_COLUMN', `column "${name}" appears twice in unique constraint`, {
          position: clause.pos,
        });
      }
      columns.push(i);
    }
    if (seen.has(columns.join(','))) continue;
    seen.add(columns.join(','));
    const base = `${stmt.name}_${clause.columns.join('_')}_key`;
    let name = base;
    for (let n = 1; names.has(name); n++) name = `${base}${n}`;
    names.add(name);
    out.push({ name, columns });
  }
  return out;
}

/** The relation in which a source with on_error 'skip' records the messages it skipped. */
export function sourceErrorsDef(source: string): TableDef {
  const name = `${source}_errors`;
  const column = (n: string, type: ColumnMeta['type'], nullable = false): ColumnMeta => ({
    name: n,
    type,
    nullable,
  });
  return {
    kind: 'table',
    name,
    columns: [
      column('topic', T.text),
      column('kafka_partition', T.int32),
      column('kafka_offset', T.int64),
      column('reason', T.text),
      column('raw', T.text, true),
    ],
    primaryKey: null,
    sql: `-- errors relation of source ${source}`,
    errorsOf: source,
  };
}

/** A value assigned to a column (INSERT, UPDATE, a DEFAULT): PostgreSQL's assignment cast. */
export function assignCast(
  value: Value,
  from: { kind: string } & Parameters<typeof castValue>[1],
  col: ColumnMeta,
): Value {
  if (value === null) return null;
  if (from.kind === 'unknown') return castValue(value, T.text, col.type);
  if (col.type.kind === 'text' && col.type.maxLength !== undefined && typeof value === 'string') {
    // Lengths count characters; trailing blanks beyond the length are dropped, not an error.
    if (fitLength(value, col.type.maxLength, false) === null) {
      throw new SluiceError('STRING_TOO_LONG', `value too long for type ${typeName(col.type)}`);
    }
  }
  return castValue(value, from, col.type);
}

export function asSluiceError(error: unknown): SluiceError {
  if (error instanceof SluiceError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SluiceError('INTERNAL_ERROR', `internal error: ${message}`);
}
