// Result sets as aligned text tables, psql-style: column names, numbers right-aligned, NULL shown as
// its own marker, widths measured in terminal columns (wide CJK and emoji count two, combining marks
// none). Control characters in data are escaped, so a value can neither break a row onto two lines
// nor send an escape sequence to the terminal.
import stringWidth from 'string-width';

export interface TableColumn {
  readonly name: string;
  /** PostgreSQL's type name as the API reports it (`integer`, `double precision`, `text` …). */
  readonly type?: string;
}

export interface TableOptions {
  /** What a NULL prints as (default `NULL`). */
  readonly nullText?: string;
}

const NUMERIC_TYPE = /^(smallint|integer|bigint|real|double precision|numeric|decimal)\b/;

/** Whether a column of this type is right-aligned. */
export function isNumericType(type: string | undefined): boolean {
  return type !== undefined && NUMERIC_TYPE.test(type);
}

// C0 and C1 controls, DEL, and the bidirectional overrides/isolates (which reorder what follows).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Text with every control character written as an escape (`\n`, `\x1b`, `\u202e`). */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const named = NAMED[c];
    if (named !== undefined) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

// What JSON.stringify leaves raw that a terminal still acts on: DEL, the C1 controls (U+009B is a
// one-character CSI to some terminals) and the bidirectional overrides/isolates. It already writes
// C0 controls (ESC among them) as \u escapes.
const JSON_UNSAFE = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text safe to print to a terminal, and still the same JSON: the characters above can only
 * occur inside its strings, where `\uXXXX` reads back as the same character.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One value as one line of text. Integers beyond 2^53 arrive as strings and print as they are. */
export function cellText(value: unknown, nullText = 'NULL'): string {
  if (value === null || value === undefined) return nullText;
  if (typeof value === 'string') return escapeControls(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return escapeControls(JSON.stringify(value) ?? String(value));
}

/**
 * The widest a column is padded to. A longer cell prints whole and overflows its column; without
 * the bound one 4 MiB value padded every other row of its column to 4 MiB of blanks (10,000 rows:
 * 40 GB built in memory and printed).
 */
export const MAX_ALIGN_WIDTH = 200;

/** Terminal columns the text takes (after `escapeControls` it holds no control characters). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

function pad(text: string, width: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return right ? fill + text : text + fill;
}

/**
 * The table's lines (header, rule, one line per row), without a footer. Trailing blanks are trimmed
 * so output compares cleanly.
 */
export function formatTable(
  columns: readonly TableColumn[],
  rows: readonly Readonly<Record<string, unknown>>[],
  options: TableOptions = {},
): string[] {
  const nullText = options.nullText ?? 'NULL';
  const header = columns.map((c) => escapeControls(c.name));
  const right = columns.map((c) => isNumericType(c.type));
  const cells = rows.map((row) => columns.map((c) => cellText(row[c.name], nullText)));
  const widths = header.map((h) => Math.min(displayWidth(h), MAX_ALIGN_WIDTH));
  for (const line of cells) {
    line.forEach((cell, i) => {
      const w = Math.min(displayWidth(cell), MAX_ALIGN_WIDTH);
      if (w > (widths[i] ?? 0)) widths[i] = w;
    });
  }
  const render = (line: readonly string[]): string =>
    line
      .map((cell, i) => ` ${pad(cell, widths[i] ?? 0, right[i] ?? false)} `)
      .join('|')
      .trimEnd();
  return [render(header), widths.map((w) => '-'.repeat(w + 2)).join('+'), ...cells.map(render)];
}

/** `(1 row)`, `(n rows)`; with the epoch the result is consistent at, `(n rows, epoch e)`. */
export function rowsFooter(count: number, epoch?: number): string {
  const rows = count === 1 ? '1 row' : `${count} rows`;
  return epoch === undefined ? `(${rows})` : `(${rows}, epoch ${epoch})`;
}
