// Sluice's own typed SQL AST. Produced by the parser (chevrotain statements + the node-sql-parser
// adapter for SELECT bodies); parser-library types never leave src/parser. Every node carries the
// position of its first token in the submitted text, so later stages can point errors at it.
import type { SourcePosition } from '../common/errors.ts';

export type Pos = SourcePosition;

/** A type as written: `name` is lowercased and whitespace-normalised ("double precision"). */
export interface TypeName {
  readonly name: string;
  readonly params: readonly number[];
  /** `int[]`, `int ARRAY`: how many array dimensions were written (absent: not an array). */
  readonly arrayDims?: number;
  /**
   * `bpchar` without a length written in a SELECT (the node-sql-parser adapter), which refused it
   * while a journaled statement's `bpchar` meant char(1): resolved as written even when replayed
   * (types-resolve.ts). Only that type is marked, so other casts read the same on both parse paths.
   */
  readonly inSelect?: true;
  readonly pos: Pos;
}

export type LiteralValue = null | boolean | number | bigint | string;

export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  /** Exponentiation (PostgreSQL's `^`: power). */
  | '^'
  | '='
  | '<>'
  | '<'
  | '<='
  | '>'
  | '>='
  /** Null-safe (in)equality: NULL is not distinct from NULL, and distinct from any value. */
  | 'is distinct from'
  | 'is not distinct from'
  | 'and'
  | 'or'
  | '||'
  /** POSIX regular expression match: case-sensitive, insensitive, and their negations. */
  | '~'
  | '~*'
  | '!~'
  | '!~*'
  /** jsonb: field or element, as text, at a path, as text at a path, contains, contained, key exists. */
  | '->'
  | '->>'
  | '#>'
  | '#>>'
  /** jsonb: delete at a path. */
  | '#-'
  | '@>'
  | '<@'
  | '?'
  /** jsonb: any / all of the text[] keys exist. */
  | '?|'
  | '?&'
  /** arrays: overlap (and @> <@ containment). */
  | '&&';

export type Expr =
  /**
   * `literalType`: 'integer' for digits-only literals (value is number when safe, else bigint),
   * 'numeric' for literals with a point or exponent (value: number), 'string' for quoted text,
   * 'boolean' for TRUE/FALSE, 'null' for NULL.
   */
  | {
      readonly kind: 'literal';
      readonly value: LiteralValue;
      readonly literalType: 'null' | 'boolean' | 'integer' | 'numeric' | 'string';
      /** A 'numeric' literal's exact source text (the value is only its nearest double). */
      readonly text?: string;
      readonly pos: Pos;
    }
  | { readonly kind: 'column'; readonly table?: string; readonly name: string; readonly pos: Pos }
  | { readonly kind: 'unary'; readonly op: '-' | '+' | 'not'; readonly operand: Expr; readonly pos: Pos }
  | {
      readonly kind: 'binary';
      readonly op: BinaryOp;
      readonly left: Expr;
      readonly right: Expr;
      readonly pos: Pos;
    }
  | {
      readonly kind: 'isNull';
      readonly operand: Expr;
      readonly negated: boolean;
      /** Written `IS [NOT] UNKNOWN`: IS [NOT] NULL of a boolean (any other type is an error). */
      readonly unknown?: true;
      readonly pos: Pos;
    }
  | {
      readonly kind: 'between';
      readonly operand: Expr;
      readonly low: Expr;
      readonly high: Expr;
      readonly negated: boolean;
      /** `BETWEEN SYMMETRIC`: the bounds in either order. */
      readonly symmetric?: true;
      readonly pos: Pos;
    }
  | {
      readonly kind: 'inList';
      readonly operand: Expr;
      readonly list: readonly Expr[];
      readonly negated: boolean;
      readonly pos: Pos;
    }
  | {
      readonly kind: 'like';
      readonly operand: Expr;
      readonly pattern: Expr;
      readonly negated: boolean;
      /** ILIKE */
      readonly caseInsensitive: boolean;
      /** SIMILAR TO (the pattern is SQL's regular expression form) */
      readonly similar?: boolean;
      readonly pos: Pos;
    }
  | {
      readonly kind: 'case';
      /** CASE x WHEN ... (simple form) when present; searched CASE otherwise. */
      readonly operand?: Expr;
      readonly whens: readonly { readonly when: Expr; readonly then: Expr }[];
      readonly else?: Expr;
      readonly pos: Pos;
    }
  | { readonly kind: 'cast'; readonly operand: Expr; readonly type: TypeName; readonly pos: Pos }
  /**
   * `(SELECT ...)` used as a value (a scalar subquery); also the one item of the `list` of an
   * `inList` written `x [NOT] IN (SELECT ...)`, which is then a predicate subquery.
   */
  | { readonly kind: 'subquery'; readonly query: SelectStmt; readonly pos: Pos }
  /** `EXISTS (SELECT ...)` (NOT EXISTS is `not` over it); `pos` is the word EXISTS. */
  | { readonly kind: 'exists'; readonly query: SelectStmt; readonly pos: Pos }
  | {
      readonly kind: 'function';
      /** lowercased */
      readonly name: string;
      readonly args: readonly Expr[];
      /** COUNT(DISTINCT x) */
      readonly distinct: boolean;
      /** COUNT(*) */
      readonly star: boolean;
      /** `agg(...) FILTER (WHERE cond)`: the condition (the binder refuses it on a non-aggregate). */
      readonly filter?: Expr;
      /**
       * `f(1, b => 2)`: each argument's name where it was written with one (named arguments follow
       * the positional ones); absent when none was.
       */
      readonly argNames?: readonly (ArgName | undefined)[];
      /** `OVER (...)`: a window function call (only a select item may be one). */
      readonly over?: WindowSpec;
      /**
       * `agg(x, … ORDER BY y [DESC] …)`: the order an aggregate reads its rows in (the binder
       * refuses it on an aggregate that does not take one).
       */
      readonly orderBy?: readonly OrderItem[];
      readonly pos: Pos;
    };

/** `OVER ([PARTITION BY exprs] [ORDER BY items] [frame])`; `pos` is that of OVER. */
export interface WindowSpec {
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly OrderItem[];
  /** Absent: the default frame (RANGE UNBOUNDED PRECEDING, peers included; the whole partition without ORDER BY). */
  readonly frame?: WindowFrameSpec;
  readonly pos: Pos;
}

/**
 * `ROWS BETWEEN start AND end`: each bound an offset from the current row (negative: n PRECEDING,
 * 0: CURRENT ROW, positive: n FOLLOWING), `start` null for UNBOUNDED PRECEDING and `end` null for
 * UNBOUNDED FOLLOWING (`ROWS start` alone ends at CURRENT ROW); `pos` of ROWS.
 */
export interface WindowFrameSpec {
  readonly start: number | null;
  readonly end: number | null;
  readonly pos: Pos;
  /**
   * PostgreSQL's error folding an offset (`2147483647 + 1` is integer out of range), which older
   * releases did not raise: the planner refuses a new statement with it and binds a journaled one.
   */
  readonly rangeError?: { readonly message: string; readonly pos: Pos };
}

export type SelectItem =
  | { readonly kind: 'expr'; readonly expr: Expr; readonly alias?: string; readonly pos: Pos }
  | { readonly kind: 'star'; readonly table?: string; readonly pos: Pos };

export interface TableRef {
  readonly kind: 'table';
  readonly name: string;
  readonly alias?: string;
  /**
   * `name FOR SYSTEM_TIME AS OF PROCTIME()` (the only AS OF accepted; temporal-join-syntax.ts): the
   * relation is the lookup side of a processing-time temporal join; the position of FOR.
   */
  readonly asOfProctime?: Pos;
  readonly pos: Pos;
}

/** `cross` also stands for a comma in FROM (`FROM a, b` is `a CROSS JOIN b`). */
export type JoinKind = 'inner' | 'left' | 'right' | 'full' | 'cross';

/**
 * `left <kind> JOIN right [ON cond | USING (cols)]`, or `NATURAL <kind> JOIN`. A FROM list and a chain
 * of joins nest to the left (`a JOIN b ON … JOIN c ON …` is `(a ⋈ b) ⋈ c`); parentheses nest as
 * written. ON is present only for an ON join, `using` only for USING; NATURAL has neither.
 */
export interface JoinRef {
  readonly kind: 'join';
  readonly joinKind: JoinKind;
  readonly left: FromItem;
  readonly right: FromItem;
  readonly on?: Expr;
  readonly using?: readonly { readonly name: string; readonly pos: Pos }[];
  readonly natural: boolean;
  /** The first word of the join (JOIN, INNER, LEFT, …, NATURAL, CROSS), or the comma of a FROM list. */
  readonly pos: Pos;
}

/** `(SELECT …) [AS] alias`, a derived table; PostgreSQL 16 allows it without an alias. */
export interface SubqueryRef {
  readonly kind: 'subquery';
  readonly query: SelectStmt;
  readonly alias?: string;
  /** `AS s (a, b)`: names replacing the first columns' names. */
  readonly columns?: readonly { readonly name: string; readonly pos: Pos }[];
  /** The `(` that opens the subquery. */
  readonly pos: Pos;
}

/**
 * A window table function in FROM: `TUMBLE(t, ts, size [, offset])`, `HOP(t, ts, slide, size
 * [, offset])`, `SESSION(t [PARTITION BY k], ts, gap)` (RisingWave's form), or Flink's
 * `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`;
 * `args` are the interval arguments after the time column, in the order written. The relation is
 * named by its alias, else by the table's name.
 */
export interface WindowTvfRef {
  readonly kind: 'windowTvf';
  readonly fn: 'tumble' | 'hop' | 'session';
  readonly source: TableRef | SubqueryRef;
  /** SESSION's `PARTITION BY` columns after the relation (Flink's `TABLE t PARTITION BY k`). */
  readonly partitionBy?: readonly { readonly name: string; readonly pos: Pos }[];
  readonly timeColumn: { readonly name: string; readonly pos: Pos };
  readonly args: readonly Expr[];
  readonly alias?: string;
  /** The function's name. */
  readonly pos: Pos;
}

/**
 * A set-returning function in FROM, `[AS] [alias [(x [, n])]]` after it: `unnest(array)` (one row per
 * element) or `generate_series(start, stop [, step])` (one row per value), `[WITH ORDINALITY]`;
 * alone (`FROM generate_series(1, 3)`) or after a relation its arguments read (`FROM t, unnest(t.a)`,
 * `t CROSS JOIN [LATERAL] unnest(t.a)`).
 */
export interface UnnestRef {
  readonly kind: 'unnest';
  readonly fn:
    | 'unnest'
    | 'generate_series'
    | 'jsonb_array_elements'
    | 'jsonb_array_elements_text'
    | 'jsonb_each'
    | 'jsonb_each_text'
    | 'jsonb_object_keys';
  /** unnest: the array; generate_series: start, stop and the step if written; jsonb's: the value. */
  readonly args: readonly Expr[];
  readonly ordinality: boolean;
  readonly alias?: string;
  /** `AS u (x [, n])`: the element's (and the ordinal's) column names. */
  readonly columns?: readonly { readonly name: string; readonly pos: Pos }[];
  /** The word unnest. */
  readonly pos: Pos;
}

/**
 * `(VALUES (e, …), …) [AS] [alias [(a, …)]]` in FROM: a relation of constant rows, every row as
 * wide as the first; its columns are named column1, column2, … unless the alias list names them.
 */
export interface ValuesRef {
  readonly kind: 'values';
  readonly rows: readonly (readonly Expr[])[];
  readonly alias?: string;
  readonly columns?: readonly { readonly name: string; readonly pos: Pos }[];
  /** The `(` before VALUES. */
  readonly pos: Pos;
}

export type FromItem = TableRef | JoinRef | SubqueryRef | WindowTvfRef | UnnestRef | ValuesRef;

/**
 * `left UNION|INTERSECT|EXCEPT [ALL] right`, with PostgreSQL's precedence (INTERSECT binds tighter,
 * the others nest to the left) and parentheses as written.
 */
export interface SetOperation {
  readonly op: 'union' | 'intersect' | 'except';
  readonly all: boolean;
  readonly left: SelectStmt;
  readonly right: SelectStmt;
  /** The operator's first word. */
  readonly pos: Pos;
}

/** `name [(columns)] AS (query)` of a WITH clause (not RECURSIVE). */
export interface CommonTableExpr {
  readonly name: string;
  readonly columns?: readonly { readonly name: string; readonly pos: Pos }[];
  readonly query: SelectStmt;
  readonly pos: Pos;
}

export interface OrderItem {
  readonly expr: Expr;
  readonly desc: boolean;
  readonly nulls?: 'first' | 'last';
  readonly pos: Pos;
}

/**
 * One SELECT, or a set operation of SELECTs (`setOp`), with its WITH clause. Constructs the engine
 * cannot maintain yet (subqueries outside FROM, window functions other than the ranking ones,
 * recursive CTEs) are rejected by the parser adapter with NOT_SUPPORTED; ORDER BY / LIMIT are kept
 * (ad-hoc queries sort by them; views and nested queries keep them as a TopN).
 */
export interface SelectStmt {
  readonly kind: 'select';
  readonly distinct: boolean;
  /** `SELECT DISTINCT ON (exprs)`: one row per distinct value of `exprs`, the first by ORDER BY. */
  readonly distinctOn?: readonly Expr[];
  readonly items: readonly SelectItem[];
  /** Absent for `SELECT 1 + 1`. */
  readonly from?: FromItem;
  readonly where?: Expr;
  readonly groupBy: readonly Expr[];
  /**
   * `GROUP BY ROLLUP (…) | CUBE (…) | GROUPING SETS (…)`: each grouping set as indices into
   * `groupBy` (which then lists each grouping expression once); absent for a plain GROUP BY.
   */
  readonly groupingSets?: readonly (readonly number[])[];
  readonly having?: Expr;
  readonly orderBy: readonly OrderItem[];
  readonly limit?: Expr;
  readonly offset?: Expr;
  /**
   * A set operation: the query is `setOp`, and ORDER BY / LIMIT / OFFSET above apply to its result
   * (items and the other clauses are then empty).
   */
  readonly setOp?: SetOperation;
  /** WITH: common table expressions visible in this query (and the queries nested in it). */
  readonly with?: readonly CommonTableExpr[];
  readonly pos: Pos;
}

export interface ColumnDef {
  readonly name: string;
  readonly type: TypeName;
  readonly notNull: boolean;
  /** `col type PRIMARY KEY` written inline. */
  readonly primaryKey: boolean;
  /** `col type UNIQUE` written inline: the position of UNIQUE. */
  readonly unique?: Pos;
  /** `DEFAULT expr`: the expression and its text as written (the catalog shows the text). */
  readonly default?: { readonly expr: Expr; readonly text: string };
  readonly pos: Pos;
}

/** A table constraint `UNIQUE (a, b)`: its column names, and the position of UNIQUE. */
export interface UniqueClause {
  readonly columns: readonly string[];
  readonly pos: Pos;
}

/** An item of an INSERT's VALUES row: an expression, or the keyword DEFAULT (the column's default). */
export type ValuesItem = Expr | { readonly kind: 'default'; readonly pos: Pos };

/** One `name value` pair of a connector's option list, as written (validated by the planner). */
export interface ConnectorOption {
  /** lowercased */
  readonly name: string;
  readonly pos: Pos;
  /** `string` for a quoted literal, `integer`/`number` for numerals (sign applied), `word` for a bare name. */
  readonly valueKind: 'string' | 'integer' | 'number' | 'word';
  /** The literal's value: the string's text, the numeral's text, or the word as written. */
  readonly value: string;
  readonly valuePos: Pos;
}

/** `WATERMARK FOR column AS expr` in CREATE TABLE / CREATE SOURCE (RisingWave's syntax). */
export interface WatermarkClause {
  readonly column: string;
  readonly columnPos: Pos;
  readonly expr: Expr;
  /** The expression as written (what the catalog shows). */
  readonly text: string;
  /** The word WATERMARK. */
  readonly pos: Pos;
}

/** `KAFKA (option value, ...)` after CREATE SOURCE ... FROM or CREATE SINK ... INTO. */
export interface ConnectorClause {
  /** lowercased connector name (only `kafka` is known; the planner rejects others). */
  readonly connector: string;
  readonly pos: Pos;
  readonly options: readonly ConnectorOption[];
}

/** A SQL function's parameter: its name (bodies refer to it) and declared type. */
export interface FunctionParam {
  readonly name: string;
  readonly type: TypeName;
  readonly pos: Pos;
}

export type Statement =
  | {
      readonly kind: 'createTable';
      readonly name: string;
      readonly ifNotExists: boolean;
      readonly columns: readonly ColumnDef[];
      /** From a `PRIMARY KEY (a, b)` clause. */
      readonly primaryKey?: readonly string[];
      /** `UNIQUE (a, b)` table constraints, in order; absent when there are none. */
      readonly unique?: readonly UniqueClause[];
      readonly watermark?: WatermarkClause;
      /** `APPEND ONLY` after the column list: inserts only, never a delete, update or replace. */
      readonly appendOnly?: true;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'createSource';
      readonly name: string;
      readonly ifNotExists: boolean;
      readonly columns: readonly ColumnDef[];
      /** From a `PRIMARY KEY (a, b)` clause. */
      readonly primaryKey?: readonly string[];
      /** `UNIQUE (a, b)` table constraints, in order (refused for a source by the engine). */
      readonly unique?: readonly UniqueClause[];
      readonly watermark?: WatermarkClause;
      readonly connector: ConnectorClause;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'createSink';
      readonly name: string;
      readonly ifNotExists: boolean;
      /** The materialized view whose changelog the sink writes. */
      readonly from: string;
      readonly fromPos: Pos;
      readonly connector: ConnectorClause;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'createView';
      readonly name: string;
      readonly ifNotExists: boolean;
      readonly columnNames?: readonly string[];
      readonly query: SelectStmt;
      /** The SELECT text exactly as written, for the catalog. */
      readonly queryText: string;
      /** Where `EMIT ON WINDOW CLOSE` starts, when the view has it (docs/sql.md "Watermarks"). */
      readonly emitOnWindowClose?: Pos;
      /** `EMIT ON WINDOW CLOSE ALLOWED LATENESS INTERVAL '…' [unit]`: how long a window stays open past the watermark. */
      readonly allowedLateness?: AllowedLatenessClause;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'createFunction';
      readonly name: string;
      readonly orReplace: boolean;
      readonly params: readonly FunctionParam[];
      readonly returns: TypeName;
      readonly returnsPos: Pos;
      /** The body's one expression (`SELECT expr` between `$$`, or `RETURN expr`). */
      readonly body: Expr;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'drop';
      readonly objectKind: 'table' | 'view' | 'source' | 'sink' | 'function';
      readonly name: string;
      /** `DROP FUNCTION f(int)`: the argument types written (checked against the function's). */
      readonly argTypes?: readonly TypeName[];
      readonly ifExists: boolean;
      readonly cascade: boolean;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'show';
      readonly objectKind: 'tables' | 'views' | 'sources' | 'sinks' | 'functions' | 'clock' | 'watermarks';
      readonly pos: Pos;
      readonly text: string;
    }
  /** SET CLOCK TO 'timestamptz': moves a manual logical clock (docs/server.md). */
  | {
      readonly kind: 'setClock';
      readonly value: string;
      readonly valuePos: Pos;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'explain';
      readonly dataflow: boolean;
      readonly query: SelectStmt;
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'insert';
      readonly table: string;
      /** The column list; `[]` for `DEFAULT VALUES` (whose one row is then empty). */
      readonly columns?: readonly string[];
      /** The VALUES rows; empty for `INSERT … SELECT`. */
      readonly rows: readonly (readonly ValuesItem[])[];
      /** `INSERT … SELECT` (or `WITH …`): the query whose rows are inserted. */
      readonly query?: SelectStmt;
      /** `RETURNING …`: what the answer shows of each row inserted (never what is written). */
      readonly returning?: readonly SelectItem[];
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'update';
      readonly table: string;
      /** `UPDATE t [AS] alias`: the name the statement's expressions call the table by. */
      readonly alias?: string;
      readonly assignments: readonly { readonly column: string; readonly value: Expr; readonly pos: Pos }[];
      /** `FROM u, v …`: relations joined to the table by the WHERE (src/parser/dml-from.ts). */
      readonly from?: DmlFrom;
      readonly where?: Expr;
      /** `RETURNING …` over each row's new values. */
      readonly returning?: readonly SelectItem[];
      readonly pos: Pos;
      readonly text: string;
    }
  | {
      readonly kind: 'delete';
      readonly table: string;
      readonly alias?: string;
      /** `USING u, v …`: as UPDATE's FROM. */
      readonly from?: DmlFrom;
      readonly where?: Expr;
      /** `RETURNING …` over each deleted row. */
      readonly returning?: readonly SelectItem[];
      readonly pos: Pos;
      readonly text: string;
    }
  | { readonly kind: 'select'; readonly query: SelectStmt; readonly pos: Pos; readonly text: string };

/** The relations an UPDATE's FROM or a DELETE's USING lists, joined as a query's FROM list. */
export interface DmlFrom {
  readonly items: FromItem;
  /** The word FROM or USING. */
  readonly pos: Pos;
}

/** An EMIT ON WINDOW CLOSE view's `ALLOWED LATENESS INTERVAL 'text' [unit]`, checked by the planner. */
export interface AllowedLatenessClause {
  /** The interval literal's text and its unit (lowercase), if one follows it. */
  readonly text: string;
  readonly unit?: string;
  readonly pos: Pos;
}

/** The name of a named argument (`days` in `make_interval(days => 3)`), as written, and where. */
export interface ArgName {
  /** lowercased unless quoted */
  readonly name: string;
  readonly pos: Pos;
}
