// Parser and printers for Sluice's golden test format (.slt). The format is documented in
// test/golden/README.md and at the top of test/golden.test.ts; this file only turns text into records
// and values into text, so the runner stays a small loop.
import type { Change, ViewChangeSet, ViewRowError } from '../../src/exec/api.ts';
import type { ColumnInfo, Row, Value } from '../../src/common/types.ts';
import { Jsonb } from '../../src/common/json/jsonb.ts';

export type Record_ =
  | {
      readonly verb: 'statement';
      readonly line: number;
      readonly expectError?: string;
      readonly sql: string;
      readonly block?: Block;
    }
  | {
      readonly verb: 'insert' | 'delete' | 'update' | 'batch';
      readonly line: number;
      readonly table: string;
      readonly expectError?: string;
      readonly rows: readonly string[];
    }
  | { readonly verb: 'query'; readonly line: number; readonly target: string; readonly block: Block }
  | {
      readonly verb: 'schema' | 'changes' | 'errors';
      readonly line: number;
      readonly view: string;
      readonly block: Block;
    }
  | {
      readonly verb: 'explain';
      readonly line: number;
      readonly dataflow: boolean;
      readonly sql: string;
      readonly block: Block;
    }
  | { readonly verb: 'epoch'; readonly line: number; readonly expected: number }
  /** Sets the engine's manual clock to a timestamptz and ticks (an epoch when a bound is crossed). */
  | { readonly verb: 'clock'; readonly line: number; readonly time: string }
  | { readonly verb: 'halt'; readonly line: number };

/** Expected output: the lines after `----`, as [start, end) 0-based line indexes into the file. */
export interface Block {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export class SltSyntaxError extends Error {}

/** Splits a .slt file into records (blank-line separated; `#` lines are comments). */
export function parseSlt(text: string): Record_[] {
  const lines = text.split('\n');
  const records: Record_[] = [];
  let i = 0;
  const isBlank = (l: string | undefined): boolean => l === undefined || l.trim() === '';
  while (i < lines.length) {
    const head = lines[i]!;
    if (isBlank(head) || head.trimStart().startsWith('#')) {
      i++;
      continue;
    }
    const line = i + 1;
    // Body: up to `----` (if any) then the block up to a blank line.
    const body: string[] = [];
    i++;
    while (!isBlank(lines[i]) && lines[i]!.trim() !== '----') {
      if (!lines[i]!.trimStart().startsWith('#')) body.push(lines[i]!);
      i++;
    }
    let block: Block | undefined;
    if (lines[i]?.trim() === '----') {
      const start = i + 1;
      i = start;
      while (!isBlank(lines[i])) i++;
      block = { start, end: i, text: lines.slice(start, i).join('\n') };
    }
    const words = head.trim().split(/\s+/);
    const verb = words[0];
    const need = (b: Block | undefined): Block => {
      if (b === undefined) throw new SltSyntaxError(`line ${line}: "${verb}" needs a ---- block`);
      return b;
    };
    const errorCode = (at: number): string | undefined => {
      if (words[at] === undefined) return undefined;
      if (words[at] !== 'error' || words[at + 1] === undefined) {
        throw new SltSyntaxError(
          `line ${line}: expected "error CODE" after "${words.slice(0, at).join(' ')}"`,
        );
      }
      return words[at + 1];
    };
    switch (verb) {
      case 'statement': {
        const mode = words[1];
        if (mode !== 'ok' && mode !== 'error')
          throw new SltSyntaxError(`line ${line}: statement ok|error CODE`);
        const code = mode === 'error' ? words[2] : undefined;
        if (mode === 'error' && code === undefined)
          throw new SltSyntaxError(`line ${line}: statement error needs a CODE`);
        records.push({
          verb: 'statement',
          line,
          ...(code !== undefined ? { expectError: code } : {}),
          sql: body.join('\n'),
          ...(block !== undefined ? { block } : {}),
        });
        break;
      }
      case 'insert':
      case 'delete':
      case 'update':
      case 'batch': {
        const table = words[1];
        if (table === undefined) throw new SltSyntaxError(`line ${line}: ${verb} needs a table`);
        const code = errorCode(2);
        records.push({ verb, line, table, rows: body, ...(code !== undefined ? { expectError: code } : {}) });
        break;
      }
      case 'query': {
        const rest = head.trim().slice('query'.length).trim();
        const target = [rest, ...body].filter((s) => s.trim() !== '').join('\n');
        records.push({ verb: 'query', line, target, block: need(block) });
        break;
      }
      case 'schema':
      case 'changes':
      case 'errors': {
        const view = words[1];
        if (view === undefined) throw new SltSyntaxError(`line ${line}: ${verb} needs a view`);
        records.push({ verb, line, view, block: need(block) });
        break;
      }
      case 'explain': {
        const dataflow = words[1] === 'dataflow';
        records.push({ verb: 'explain', line, dataflow, sql: body.join('\n'), block: need(block) });
        break;
      }
      case 'epoch': {
        const n = Number(words[1]);
        if (!Number.isInteger(n)) throw new SltSyntaxError(`line ${line}: epoch N`);
        records.push({ verb: 'epoch', line, expected: n });
        break;
      }
      case 'clock': {
        const time = head.trim().slice('clock'.length).trim();
        if (time === '') throw new SltSyntaxError(`line ${line}: clock TIMESTAMPTZ`);
        records.push({ verb: 'clock', line, time });
        break;
      }
      case 'halt':
        records.push({ verb: 'halt', line });
        break;
      default:
        throw new SltSyntaxError(`line ${line}: unknown verb "${verb}"`);
    }
  }
  return records;
}

const BIG = '__sluice_exact_bigint__:';

/** JSON.parse that keeps integers beyond 2^53 exact (as bigint). */
export function parseRow(text: string): Row {
  const marked = text.replace(
    /("(?:[^"\\]|\\.)*")|(-?\d{16,})(?![.\deE])/g,
    (m, str: string | undefined, big: string | undefined) =>
      str !== undefined ? str : Number.isSafeInteger(Number(big)) ? m : `"${BIG}${big}"`,
  );
  const parsed: unknown = JSON.parse(marked, (_k, v: unknown) =>
    typeof v === 'string' && v.startsWith(BIG) ? BigInt(v.slice(BIG.length)) : v,
  );
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SltSyntaxError(`not a JSON object: ${text}`);
  }
  return parsed as Row;
}

/** A value as a query cell. */
export function cell(v: Value | undefined): string {
  if (v === null) return 'NULL';
  if (v === undefined) return '<missing>';
  if (typeof v === 'string') return v === '' ? '(empty)' : v;
  if (typeof v === 'number' && Object.is(v, -0)) return '-0';
  return String(v);
}

export function formatRows(columns: readonly ColumnInfo[] | undefined, rows: readonly Row[]): string {
  return rows
    .map((r) => {
      const names = columns !== undefined ? columns.map((c) => c.name) : Object.keys(r);
      return names.map((n) => cell(r[n])).join(' | ');
    })
    .sort()
    .join('\n');
}

/** JSON of a row in column order; bigints as bare digits, -0 kept visible. */
export function rowJson(columns: readonly ColumnInfo[] | undefined, row: Row): string {
  const names = columns !== undefined ? columns.map((c) => c.name) : Object.keys(row);
  const parts = names.map((n) => {
    const v = row[n];
    let s: string;
    if (typeof v === 'bigint') s = v.toString();
    else if (typeof v === 'number' && Object.is(v, -0)) s = '-0';
    else if (v instanceof Jsonb)
      s = v.text; // JSON, as the wire shows it
    else s = v === undefined ? '"<missing>"' : JSON.stringify(v);
    return `${JSON.stringify(n)}:${s}`;
  });
  return `{${parts.join(',')}}`;
}

const OP_RANK: Record<Change['op'], number> = { '-D': 0, '-U': 1, '+U': 2, '+I': 3 };

/** A change set as sorted lines: by key (or whole row), then -D, -U, +U, +I; errors last. */
export function formatChanges(
  columns: readonly ColumnInfo[] | undefined,
  key: readonly string[] | null,
  cs: ViewChangeSet,
): string {
  const sortKey = (c: Change): string =>
    key !== null ? JSON.stringify(key.map((k) => cell(c.row[k]))) : rowJson(columns, c.row);
  const lines = [...cs.changes]
    .sort((a, b) => {
      const ka = sortKey(a);
      const kb = sortKey(b);
      if (ka !== kb) return ka < kb ? -1 : 1;
      if (OP_RANK[a.op] !== OP_RANK[b.op]) return OP_RANK[a.op] - OP_RANK[b.op];
      const ra = rowJson(columns, a.row);
      const rb = rowJson(columns, b.row);
      return ra < rb ? -1 : ra > rb ? 1 : 0;
    })
    .map((c) => `${c.op} ${rowJson(columns, c.row)}${c.n !== undefined ? ` n=${c.n}` : ''}`);
  for (const e of cs.errors ?? []) lines.push(`${e.op} ${formatError(e.error)}`);
  return lines.join('\n');
}

export function formatError(e: ViewRowError): string {
  return `${e.code} count=${e.count} epoch=${e.epoch} ${rowJson(undefined, e.row)}: ${e.message}`;
}
