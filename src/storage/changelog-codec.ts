// Encodings of one view's changes in one epoch. The wire form is the `changes` message of API.md; the
// stored form (one per view per epoch, in the changelog table) is a compact positional form of the
// same values:
//
//   {"k":["col",...],"p":{positions},"t":"clock","w":{watermarks},"c":[op,v1,...,vk, ...],"n":[i,n,...],"x":[errors]}
//
// `t` is the epoch's logical clock and `w` the watermarks the view reads (each absent when the change
// set has none: entries stored before they were recorded). `c` is flat (stride k+1); `n` lists the change indexes whose multiplicity is not 1 (absent when
// none); `x` is the wire JSON of the row errors (absent when none). Every value is stored as its
// wire JSON (bigints and non-finite floats as strings), so turning a stored entry back into the
// wire message is a pure text transformation that yields exactly the message sent live.
//
// Both forms are written by hand, in one pass (an encoder generated per column list): for the flat
// rows a view produces this is several times faster than JSON.stringify of the message objects, and
// the stored form is about a third of the wire size. Anything unexpected (a value that is not a
// scalar, a row of another shape) falls back to the generic writer, so the output is always what
// stringifyWire would have produced.
import type { Change, ViewChangeSet } from '../common/changes.ts';
import { stringifyWire } from '../common/json-codec.ts';
import { rawChangesOf, type ChangeList } from '../common/raw-changes.ts';
import { storedValuesOf, wireChangesOf } from './ascii-json.ts';
import { ColumnListCache } from './column-list-cache.ts';
import { generatedFunction } from '../common/generated-function.ts';

/** A scalar's wire JSON, or undefined for anything else (the caller falls back). */
function wireValue(v: unknown): string | undefined {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? String(v) : `"${String(v)}"`;
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return `"${v.toString()}"`;
    case 'object':
      return v === null ? 'null' : undefined;
    default:
      return undefined;
  }
}

function keysOf(changes: readonly Change[]): string[] {
  const first = changes[0];
  return first === undefined ? [] : Object.keys(first.row);
}

/** The generic writer: exactly the message object the server always sent (the fast one's reference). */
export function wireMessageGeneric(cs: ViewChangeSet): string {
  return stringifyWire({
    type: 'changes',
    epoch: cs.epoch,
    positions: cs.positions,
    ...(cs.clock !== undefined ? { clock: cs.clock } : {}),
    ...(cs.watermarks !== undefined ? { watermarks: cs.watermarks } : {}),
    changes: cs.changes,
    ...(cs.errors !== undefined && cs.errors.length > 0 ? { errors: cs.errors } : {}),
  });
}

/** `,"clock":…,"watermarks":…` of the wire message (`"t"`/`"w"` of the stored form), each when present. */
function timePart(cs: ViewChangeSet, clockKey: string, watermarksKey: string): string {
  let s = '';
  if (cs.clock !== undefined) s += `,"${clockKey}":${JSON.stringify(cs.clock)}`;
  if (cs.watermarks !== undefined) s += `,"${watermarksKey}":${JSON.stringify(cs.watermarks)}`;
  return s;
}

function errorsPart(cs: ViewChangeSet): string {
  return cs.errors !== undefined && cs.errors.length > 0 ? `,"errors":${stringifyWire(cs.errors)}` : '';
}

/** The wire `changes` message of one epoch (API.md). */
export function encodeChangesWire(cs: ViewChangeSet): string {
  return encodeChangesPart(cs, false, true).wire as string;
}

/** The stored (compact) form of one epoch's changes; see the header. */
export function encodeChangesStored(cs: ViewChangeSet): string {
  return encodeChanges(cs, false).stored;
}

/**
 * The stored form of one epoch's changes and, when `withWire`, its wire message, written in one
 * pass over the rows, each read once for both (the server publishes the wire message of a view
 * someone listens to, and stores every view's changes).
 */
export function encodeChanges(
  cs: ViewChangeSet,
  withWire: boolean,
): { readonly stored: string; readonly wire: string | null } {
  return encodeChangesPart(cs, true, withWire) as { stored: string; wire: string | null };
}

/**
 * The stored form and/or the wire message of a change set. A lazy change set (raw-changes.ts) is
 * read as its value arrays, by column position, with no row object made; any other through its rows.
 */
function encodeChangesPart(
  cs: ViewChangeSet,
  withStored: boolean,
  withWire: boolean,
): { readonly stored: string | null; readonly wire: string | null } {
  const raw = rawChangesOf(cs);
  let keys: readonly string[];
  let body: EncodedBody | null = null;
  if (raw !== undefined && rowKeysInColumnOrder(raw.columns)) {
    keys = raw.rows.length === 0 ? [] : raw.columns;
    // Each form's values written once, as bytes (ascii-json.ts); the generated encoder takes what
    // the byte writers leave (non-ASCII text, values that are not scalars).
    const values = withStored ? storedValuesOf(raw.rows, keys.length) : null;
    const list = withWire && (values !== null || !withStored) ? wireChangesOf(raw.rows, keys) : null;
    if ((values !== null || !withStored) && (list !== null || !withWire)) {
      return {
        stored: values === null ? null : storedText(cs, keys, values.c, values.n),
        wire: list === null ? null : wireOf(cs, list),
      };
    }
    body = rawEncoders.get(keys)(raw.rows, withStored, withWire, wireValue, wireJsonValue);
  } else {
    keys = keysOf(cs.changes);
    body = encoders.get(keys)(cs.changes, withStored, withWire, wireValue, wireJsonValue);
  }
  if (body === null) {
    return {
      stored: withStored ? encodeStoredGeneric(cs) : null,
      wire: withWire ? wireMessageGeneric(cs) : null,
    };
  }
  const stored = withStored ? storedText(cs, keys, JSON.stringify(body.c), body.n) : null;
  return { stored, wire: withWire ? wireOf(cs, body.w) : null };
}

/** The stored entry around its value list `c` (JSON text) and multiplicities `n`; see the header. */
function storedText(cs: ViewChangeSet, keys: readonly string[], c: string, n: number[] | null): string {
  let stored = `{"k":${JSON.stringify(keys)},"p":${stringifyWire(cs.positions)}${timePart(cs, 't', 'w')},"c":${c}`;
  if (n !== null) stored += `,"n":${JSON.stringify(n)}`;
  if (cs.errors !== undefined && cs.errors.length > 0) stored += `,"x":${stringifyWire(cs.errors)}`;
  return `${stored}}`;
}

/**
 * Whether a row object built from these columns lists its keys in column order (what the row
 * encoder writes, from Object.keys): names all distinct, none an array index (which an object lists
 * first, in numeric order). Other column lists take the row path, so the bytes never differ.
 */
function rowKeysInColumnOrder(columns: readonly string[]): boolean {
  let known = plainColumnLists.get(columns);
  if (known === undefined) {
    known = new Set(columns).size === columns.length && !columns.some((c) => /^(0|[1-9][0-9]*)$/.test(c));
    plainColumnLists.set(columns, known);
  }
  return known;
}
const plainColumnLists = new WeakMap<readonly string[], boolean>();

/** The wire message around its change list `w` (written by an encoder). */
function wireOf(cs: ViewChangeSet, w: string): string {
  return `{"type":"changes","epoch":${cs.epoch},"positions":${stringifyWire(cs.positions)}${timePart(cs, 'clock', 'watermarks')},"changes":[${w}]${errorsPart(cs)}}`;
}

/**
 * The changes of one view's epoch as (when asked) the stored form's flat value list `c` and the wire
 * message's change list `w` (both without brackets), and the multiplicities `n`; null
 * when a change is not of the expected shape (the generic writers then take it).
 */
interface EncodedBody {
  readonly c: unknown[];
  readonly w: string;
  readonly n: number[] | null;
}
type ChangesEncoder = (
  changes: readonly Change[],
  withStored: boolean,
  withWire: boolean,
  wireValue: (v: unknown) => string | undefined,
  wireJsonValue: (v: unknown) => unknown,
) => EncodedBody | null;
/** The same over a change list (raw-changes.ts): column k is value k; multiplicity 1 is written as none. */
type RawChangesEncoder = (
  changes: ChangeList,
  withStored: boolean,
  withWire: boolean,
  wireValue: (v: unknown) => string | undefined,
  wireJsonValue: (v: unknown) => unknown,
) => EncodedBody | null;

/** Encoders by column list, over changes with row objects and over value-array change lists. */
const encoders = new ColumnListCache((keys) => compileEncoder(keys, false) as ChangesEncoder);
const rawEncoders = new ColumnListCache((keys) => compileEncoder(keys, true) as RawChangesEncoder);

/**
 * An encoder for rows with these columns, generated so that each column is read by its constant
 * name (rows of one shape: monomorphic loads, about 20% less than the loop over the names it
 * replaces). The stored form's values go to one flat array written by JSON.stringify (a flat string
 * at once: text concatenated piece by piece costs more when SQLite and the checksum flatten it). The
 * generated text holds only JSON-quoted names.
 */
function compileEncoder(keys: readonly string[], raw: boolean): ChangesEncoder | RawChangesEncoder {
  const lines: string[] = [
    'const c = [];',
    'let w = "";',
    'let n = null;',
    'for (let i = 0; i < changes.length; i++) {',
    // A change list is read through its methods (no object per change).
    ...(raw
      ? ['  const op = changes.kind(i);', '  const row = changes.row(i);']
      : [
          '  const change = changes[i];',
          '  const op = change.op;',
          '  if (op !== "+I" && op !== "-D" && op !== "-U" && op !== "+U") return null;',
          '  const row = change.row;',
        ]),
  ];
  // Rows of one view share their columns; the count catches any other shape (with the undefined
  // check on every value). A value array is read by position: its row object would hold its first
  // keys.length values under these names.
  if (!raw)
    lines.push(
      '  let count = 0;',
      '  for (const _ in row) count++;',
      `  if (count !== ${keys.length}) return null;`,
    );
  lines.push('  if (withStored) c.push(op);');
  keys.forEach((key, k) => {
    lines.push(
      `  const v${k} = row[${raw ? String(k) : JSON.stringify(key)}];`,
      `  let t${k} = "";`,
      `  if (typeof v${k} === "number" && Number.isFinite(v${k})) {`,
      `    if (withStored) c.push(v${k});`,
      `    if (withWire) t${k} = "" + v${k};`,
      '  } else {',
      `    const j = v${k} === undefined ? undefined : wireJsonValue(v${k});`,
      '    if (j === undefined) return null;',
      '    if (withStored) c.push(j);',
      `    if (withWire) t${k} = wireValue(v${k});`,
      '  }',
    );
  });
  const fields = keys
    .map((key, k) => ` + ${JSON.stringify(`${k === 0 ? '' : ','}${JSON.stringify(key)}:`)} + t${k}`)
    .join('');
  lines.push(
    `  if (withWire) w += (i === 0 ? '{"op":"' : ',{"op":"') + op + '","row":{'${fields};`,
    `  const m = ${raw ? 'changes.count(i)' : 'change.n'};`,
    // A value-array change carries n = 1 where its row object would carry no n.
    `  if (m === ${raw ? '1' : 'undefined'}) { if (withWire) w += "}}"; continue; }`,
    '  if (typeof m !== "number" || !Number.isFinite(m)) return null;',
    '  (n ??= []).push(i, m);',
    '  if (withWire) w += \'},"n":\' + m + "}";',
    '}',
    'return { c, w, n };',
  );
  return generatedFunction(
    'changes',
    'withStored',
    'withWire',
    'wireValue',
    'wireJsonValue',
    lines.join('\n'),
  ) as ChangesEncoder | RawChangesEncoder;
}

/**
 * A scalar as the JSON value of its wire form (bigint and non-finite float → string), or undefined
 * for anything else.
 */
function wireJsonValue(v: unknown): unknown {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'string':
    case 'boolean':
      return v;
    case 'bigint':
      return v.toString();
    case 'object':
      return v === null ? null : undefined;
    default:
      return undefined;
  }
}

/**
 * Anything the hand writer does not handle is stored as the wire message itself (read back as is):
 * correct, only not compact.
 */
function encodeStoredGeneric(cs: ViewChangeSet): string {
  return wireMessageGeneric(cs);
}

interface StoredForm {
  k: string[];
  p: unknown;
  t?: string;
  w?: unknown;
  c: unknown[];
  n?: number[];
  x?: unknown;
}

/**
 * The wire message of a stored entry. An entry that already is a wire message (written by the
 * generic path, or by an earlier version of the server) is returned unchanged.
 */
export function storedToWire(epoch: number, stored: string): string {
  if (!stored.startsWith('{"k":')) return stored;
  const form = JSON.parse(stored) as StoredForm;
  const keys = form.k;
  const stride = keys.length + 1;
  const prefixes = keys.map((k, i) => `${i === 0 ? '' : ','}${JSON.stringify(k)}:`);
  const multiplicity = new Map<number, number>();
  if (form.n !== undefined)
    for (let i = 0; i + 1 < form.n.length; i += 2)
      multiplicity.set(form.n[i] as number, form.n[i + 1] as number);
  const values = form.c;
  let s = `{"type":"changes","epoch":${epoch},"positions":${JSON.stringify(form.p)}`;
  if (form.t !== undefined) s += `,"clock":${JSON.stringify(form.t)}`;
  if (form.w !== undefined) s += `,"watermarks":${JSON.stringify(form.w)}`;
  s += ',"changes":[';
  for (let i = 0, at = 0; at < values.length; i++, at += stride) {
    s += i === 0 ? `{"op":"${String(values[at])}","row":{` : `,{"op":"${String(values[at])}","row":{`;
    for (let k = 0; k < keys.length; k++) {
      const v = values[at + 1 + k];
      s += (prefixes[k] as string) + (typeof v === 'number' ? String(v) : JSON.stringify(v));
    }
    const n = multiplicity.get(i);
    s += n === undefined ? '}}' : `},"n":${n}}`;
  }
  s += ']';
  if (form.x !== undefined) s += `,"errors":${JSON.stringify(form.x)}`;
  return `${s}}`;
}

/**
 * Whether two stored entries of one epoch carry the same changes: the same text, or the same
 * positions, clock and watermarks, and the same changes and errors in another order (a restored state may iterate differently).
 */
export function sameStoredChanges(epoch: number, a: string, b: string): boolean {
  if (a === b) return true;
  interface Parsed {
    positions: unknown;
    clock?: string;
    watermarks?: unknown;
    changes: unknown[];
    errors?: unknown[];
  }
  const [x, y] = [a, b].map((stored) => JSON.parse(storedToWire(epoch, stored)) as Parsed) as [
    Parsed,
    Parsed,
  ];
  // An entry stored before clocks and watermarks were recorded is compared without them.
  const timed = x.clock !== undefined && y.clock !== undefined;
  const canonical = (m: Parsed): string => {
    const sorted = (list: unknown[] | undefined): string[] =>
      (list ?? []).map((v) => JSON.stringify(v)).sort();
    const time = timed ? [m.clock, m.watermarks ?? null] : [];
    return JSON.stringify([m.positions, ...time, sorted(m.changes), sorted(m.errors)]);
  };
  return canonical(x) === canonical(y);
}
