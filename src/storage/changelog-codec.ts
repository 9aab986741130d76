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
// Both encoders write JSON by hand: for the flat rows a view produces this is 2-3x faster than
// JSON.stringify of the message objects, and the stored form is about a third of the wire size.
// Anything unexpected (a value that is not a scalar, a row of another shape) falls back to the
// generic writer, so the output is always what stringifyWire would have produced.
import type { Change, ViewChangeSet } from '../common/changes.ts';
import { stringifyWire } from '../common/json-codec.ts';

function isOp(op: string): boolean {
  return op === '+I' || op === '-D' || op === '-U' || op === '+U';
}

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

function sameShape(row: Record<string, unknown>, keys: readonly string[]): boolean {
  // Rows of one view share their columns; checking the count catches any other shape (together with
  // the undefined check on every value while writing).
  let n = 0;
  for (const _ in row) n++;
  return n === keys.length;
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
  const changes = cs.changes;
  const keys = keysOf(changes);
  const prefixes = keys.map((k, i) => `${i === 0 ? '' : ','}${JSON.stringify(k)}:`);
  let s = `{"type":"changes","epoch":${cs.epoch},"positions":${stringifyWire(cs.positions)}${timePart(cs, 'clock', 'watermarks')},"changes":[`;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as Change;
    const row = c.row as Record<string, unknown>;
    if (!isOp(c.op) || !sameShape(row, keys)) return wireMessageGeneric(cs);
    s += i === 0 ? `{"op":"${c.op}","row":{` : `,{"op":"${c.op}","row":{`;
    for (let k = 0; k < keys.length; k++) {
      const v = row[keys[k] as string];
      let text: string | undefined;
      if (typeof v === 'number' && Number.isFinite(v)) text = String(v);
      else {
        text = v === undefined ? undefined : wireValue(v);
        if (text === undefined) return wireMessageGeneric(cs);
      }
      s += (prefixes[k] as string) + text;
    }
    if (c.n === undefined) s += '}}';
    else if (typeof c.n === 'number' && Number.isFinite(c.n)) s += `},"n":${c.n}}`;
    else return wireMessageGeneric(cs);
  }
  return `${s}]${errorsPart(cs)}}`;
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
 * The stored (compact) form of one epoch's changes; see the header. The flat value list is one
 * array written by JSON.stringify (faster than concatenating it by hand).
 */
export function encodeChangesStored(cs: ViewChangeSet): string {
  const changes = cs.changes;
  const keys = keysOf(changes);
  const flat: unknown[] = [];
  let multiplicities: number[] | undefined;
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as Change;
    const row = c.row as Record<string, unknown>;
    if (!isOp(c.op) || !sameShape(row, keys)) return encodeStoredGeneric(cs);
    flat.push(c.op);
    for (let k = 0; k < keys.length; k++) {
      const v = row[keys[k] as string];
      if (typeof v === 'number' && Number.isFinite(v)) flat.push(v);
      else {
        const w = wireJsonValue(v);
        if (w === undefined) return encodeStoredGeneric(cs);
        flat.push(w);
      }
    }
    if (c.n !== undefined) {
      if (typeof c.n !== 'number' || !Number.isFinite(c.n)) return encodeStoredGeneric(cs);
      (multiplicities ??= []).push(i, c.n);
    }
  }
  let s = `{"k":${JSON.stringify(keys)},"p":${stringifyWire(cs.positions)}${timePart(cs, 't', 'w')},"c":${JSON.stringify(flat)}`;
  if (multiplicities !== undefined) s += `,"n":${JSON.stringify(multiplicities)}`;
  if (cs.errors !== undefined && cs.errors.length > 0) s += `,"x":${stringifyWire(cs.errors)}`;
  return `${s}}`;
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
