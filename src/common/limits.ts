// How much one submitted script may ask of the SQL front end, in one place. Each limit keeps the
// work of parsing, binding and planning one request bounded in time, memory and stack depth, so a
// single request cannot hold the event loop; each has its own error code (docs/errors.md, "Limits").

/** The limits the engine enforces on SQL text (`new Engine({ limits })` overrides any of them). */
export interface SqlLimits {
  /** Characters (UTF-16 code units) in one submitted script, all statements together. */
  readonly maxScriptLength: number;
  /** Statements in one script. */
  readonly maxScriptStatements: number;
  /** Catalog objects one script may create (CREATE TABLE / SOURCE / MATERIALIZED VIEW / SINK). */
  readonly maxScriptObjects: number;
  /** Characters (UTF-16 code units) in one statement. */
  readonly maxStatementLength: number;
  /** Tokens (words, literals, operators, punctuation) in one statement. */
  readonly maxStatementTokens: number;
  /**
   * Tokens of one SELECT (of a query, view or EXPLAIN) that the SQL library parses: all of them but
   * the constants of IN lists, which are read without it. It costs tens of µs per token, so this is
   * what bounds the time one statement may hold the server.
   */
  readonly maxSelectTokens: number;
  /**
   * Characters (code points) of one identifier, quoted or not. Names of tables and views appear in
   * URLs, which the HTTP server bounds too (src/server/http-errors.ts), so every name a statement
   * may create can also be read.
   */
  readonly maxIdentifierLength: number;
  /** Items in one list: IN (...) values, VALUES rows, CASE arms. */
  readonly maxListItems: number;
  /** Output columns of one SELECT (after `*` is expanded), and GROUP BY / ORDER BY items. */
  readonly maxSelectItems: number;
  /**
   * Relations one FROM joins (tables, sources and views, each use counted). Checked on the tokens
   * before any parser runs: each join condition costs the SQL library a separate parse.
   */
  readonly maxFromRelations: number;
  /** Columns of one table or source. */
  readonly maxColumns: number;
  /** Arguments of one function call. */
  readonly maxFunctionArgs: number;
  /**
   * Nesting of parentheses, function calls, CASE and prefix operators (NOT, unary minus): what the
   * parsers recurse on. Checked on the tokens before any parser runs.
   */
  readonly maxNestingDepth: number;
  /**
   * Depth of an expression tree: nesting plus operator chains (`a + b + c` is two levels deep; a
   * chain of AND or of OR counts once, as it is evaluated flat). Checked before binding.
   */
  readonly maxExpressionDepth: number;
}

/**
 * Defaults: generous for real SQL (PostgreSQL's own ceilings where it has one: 1664 output
 * columns, 1600 table columns, 100 function arguments), small enough that the largest accepted
 * statement is parsed and planned in well under a second and the deepest one fits the stack.
 */
export const DEFAULT_SQL_LIMITS: SqlLimits = {
  maxScriptLength: 16 * 1024 * 1024,
  maxScriptStatements: 10_000,
  maxScriptObjects: 1_000,
  maxStatementLength: 1024 * 1024,
  maxStatementTokens: 50_000,
  maxSelectTokens: 12_000,
  maxIdentifierLength: 128,
  maxListItems: 25_000,
  maxSelectItems: 1_664,
  maxFromRelations: 64,
  maxColumns: 1_600,
  maxFunctionArgs: 100,
  maxNestingDepth: 100,
  maxExpressionDepth: 500,
};

/**
 * No limit at all: for re-running statements that were accepted when they were first run (journal
 * replay at start). They met the limits of their day; refusing them now, after a limit was lowered
 * or added, would leave the data directory unable to start.
 */
export const REPLAY_SQL_LIMITS: SqlLimits = {
  maxScriptLength: Number.MAX_SAFE_INTEGER,
  maxScriptStatements: Number.MAX_SAFE_INTEGER,
  maxScriptObjects: Number.MAX_SAFE_INTEGER,
  maxStatementLength: Number.MAX_SAFE_INTEGER,
  maxStatementTokens: Number.MAX_SAFE_INTEGER,
  maxSelectTokens: Number.MAX_SAFE_INTEGER,
  maxIdentifierLength: Number.MAX_SAFE_INTEGER,
  maxListItems: Number.MAX_SAFE_INTEGER,
  maxSelectItems: Number.MAX_SAFE_INTEGER,
  maxFromRelations: Number.MAX_SAFE_INTEGER,
  maxColumns: Number.MAX_SAFE_INTEGER,
  maxFunctionArgs: Number.MAX_SAFE_INTEGER,
  maxNestingDepth: Number.MAX_SAFE_INTEGER,
  maxExpressionDepth: Number.MAX_SAFE_INTEGER,
};

/** The defaults with `overrides` applied; every limit must be a positive integer. */
export function resolveSqlLimits(overrides: Partial<SqlLimits> = {}): SqlLimits {
  const limits = { ...DEFAULT_SQL_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`SQL limit ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return limits;
}

/**
 * Characters (UTF-16 code units) of one text value a function may build (repeat, lpad, rpad,
 * replace, concat, regexp_replace): a larger result is STRING_TOO_LONG, raised before it is
 * allocated, so one row cannot make the process allocate without bound.
 */
export const MAX_TEXT_LENGTH = 16 * 1024 * 1024;

/**
 * Characters (UTF-16 code units) of one regular expression or SIMILAR TO pattern (INVALID_REGEX
 * beyond it), and of one to_char / to_timestamp template (INVALID_VALUE): compiling is linear in
 * the pattern, and this keeps one compilation, and what a template writes, small.
 */
export const MAX_PATTERN_LENGTH = 4096;

/**
 * NUMERIC's range, PostgreSQL's: at most 131072 digits before the point and 16383 after. A literal,
 * cast or ingested value beyond it, or an arithmetic result (a product that would grow past it is
 * refused before it is computed), is NUMERIC_OVERFLOW; so one value costs bounded CPU and memory.
 */
export const MAX_NUMERIC_INTEGER_DIGITS = 131_072;
export const MAX_NUMERIC_SCALE = 16_383;
/** Characters of a numeric text read at all (digits of both parts, sign, point, exponent, blanks). */
export const MAX_NUMERIC_TEXT_LENGTH = MAX_NUMERIC_INTEGER_DIGITS + MAX_NUMERIC_SCALE + 64;

/**
 * Elements of one array value built from input or by a function (an ARRAY[...] constructor, a
 * '{...}' literal or cast, an ingested JSON array, array_append/array_cat/string_to_array/
 * regexp_split_to_array): a larger one is ARRAY_TOO_LARGE, raised before it is built. ARRAY_AGG's
 * result is not bounded here: it holds the group's rows, which the state holds anyway.
 */
export const MAX_ARRAY_LENGTH = 100_000;
