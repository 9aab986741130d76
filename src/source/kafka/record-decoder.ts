// Turns Kafka records into row operations of a source, by format: `json` (the value is a row),
// `upsert` (key → row; a null value deletes the key), `debezium` (before/after/op envelopes become
// deletes and upserts). A record that cannot be decoded or does not fit the source's schema is a
// PoisonRecord carrying the reason; the source's on_error policy decides what happens to it.
import {
  bytesAsText,
  decodeUtf8Strict,
  describeJsonPath,
  describeLoneSurrogate,
  findIllFormedText,
  invalidUtf8Offset,
  JsonNumberOutOfRange,
  mayHoldLoneSurrogate,
  parseJsonExact,
} from '../../common/json-codec.ts';
import { SluiceError } from '../../common/errors.ts';
import type { RowTyping } from '../../common/row-typing.ts';
import type { Value } from '../../common/types.ts';
import { bigintAsText } from '../../common/values.ts';
import { FlatJsonReader } from './flat-json.ts';
import { valueLength, type KafkaRecord } from './kafka-client.ts';

export type SourceFormat = 'json' | 'upsert' | 'debezium';

export interface DecodeSpec {
  readonly format: SourceFormat;
  readonly columns: readonly string[];
  /** Required for `upsert` and `debezium`. */
  readonly primaryKey: readonly string[] | null;
  readonly maxMessageBytes: number;
  /** The source's own row validation (types, NOT NULL, key present): the reason, or null if fine. */
  readonly checkRow: (row: Record<string, unknown>) => string | null;
  /**
   * The source's own typing of a row (`json` format): `decodeTyped` hands its result on, so that the
   * engine need not validate the row again. Absent or null: rows stay objects (`decode`).
   */
  readonly typing?: RowTyping | null;
  /**
   * A keyed source's key as the engine keys it (`Engine.sourceKeyIdentity`): throws when the key
   * does not fit its columns. Absent or null: a key's identity is its values' text.
   */
  readonly keyIdentity?: ((key: Record<string, unknown>) => unknown) | null;
}

/**
 * A key's values as one text, two keys the same text only when their values' texts are: each value
 * written with its length (a text may hold any character, NUL too), an object or array (a jsonb or
 * array key) as its JSON. Where no typed identity is at hand, within one batch ("01" and 1 stay two
 * texts; the engine still keeps a batch's last row of a key however it is spelled).
 */
export function keyText(values: Record<string, unknown>, columns: readonly string[]): string {
  let text = '';
  for (const c of columns) {
    const v = values[c];
    const s = typeof v === 'object' && v !== null ? JSON.stringify(v, bigintAsText) : String(v);
    text += `${s.length}:${s}`;
  }
  return text;
}

/**
 * A row to insert (replacing the row with its key, if keyed), or a key to delete; `identity` (keyed
 * sources) is the key as the engine keys it, so that a batch keeps one operation per key however
 * the records spell it.
 */
export type RowOp =
  | { readonly kind: 'upsert'; readonly row: Record<string, unknown>; readonly identity?: unknown }
  | { readonly kind: 'delete'; readonly key: Record<string, unknown>; readonly identity?: unknown };

export class PoisonRecord extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PoisonRecord';
  }
}

const DEBEZIUM_OPS = new Set(['c', 'u', 'd', 'r']);
const BACKSLASH = 0x5c;

export class RecordDecoder {
  private readonly columnSet: ReadonlySet<string>;
  /** Reads a `json` value that is a plain flat row straight from its bytes (else `parse`). */
  readonly flat: FlatJsonReader;
  /** The raw values of the record `decodeTyped` reads, by column (scratch, overwritten per record). */
  private readonly values: unknown[];
  /** The typing's values path, when it reads the source's columns in the reader's order. */
  private readonly typedValues: ((values: readonly unknown[]) => readonly Value[] | null) | undefined;

  constructor(private readonly spec: DecodeSpec) {
    this.columnSet = new Set(spec.columns);
    this.flat = new FlatJsonReader(spec.columns);
    this.values = spec.columns.map(() => undefined);
    const order = spec.typing?.valueColumns;
    const sameOrder =
      order !== undefined &&
      order.length === spec.columns.length &&
      order.every((c, i) => c === spec.columns[i]);
    this.typedValues = sameOrder ? (spec.typing?.typedValues ?? undefined) : undefined;
    if (spec.format !== 'json' && (spec.primaryKey === null || spec.primaryKey.length === 0)) {
      throw new Error(`format '${spec.format}' needs a primary key`);
    }
  }

  /** The row operations of one record, in order; throws PoisonRecord. */
  decode(record: KafkaRecord): RowOp[] {
    const size = valueLength(record) + (record.key?.length ?? 0);
    if (size > this.spec.maxMessageBytes) {
      throw new PoisonRecord(
        `message of ${size} bytes exceeds max_message_bytes ${this.spec.maxMessageBytes}`,
      );
    }
    switch (this.spec.format) {
      case 'json':
        return this.decodeJson(record);
      case 'upsert':
        return this.decodeUpsert(record);
      case 'debezium':
        return this.decodeDebezium(record);
    }
  }

  /**
   * A `json` record's row, validated and typed by the source's typing (`spec.typing`): checked as
   * `decode` checks it, with no row operation around it. Throws PoisonRecord.
   */
  decodeTyped(record: KafkaRecord): readonly Value[] {
    const typing = this.spec.typing;
    if (this.spec.format !== 'json' || typing === undefined || typing === null) {
      throw new Error(`typed decoding needs format 'json' and the source's row typing`);
    }
    const fetched = record.fetched;
    const start = fetched === undefined ? 0 : (record.valueStart as number);
    if (fetched === undefined ? record.value === null : start < 0) {
      throw new PoisonRecord('message has no value');
    }
    const size = valueLength(record) + (record.key?.length ?? 0);
    if (size > this.spec.maxMessageBytes) {
      throw new PoisonRecord(
        `message of ${size} bytes exceeds max_message_bytes ${this.spec.maxMessageBytes}`,
      );
    }
    // A plain flat row of the source's columns needs neither the text nor the column check; a
    // record still in its fetch buffer is read there (no Buffer of its own).
    const bytes = fetched ?? (record.value as Buffer);
    const end = fetched === undefined ? bytes.length : (record.valueEnd as number);
    const typedValues = this.typedValues;
    let row: Record<string, unknown> | null;
    if (typedValues !== undefined) {
      // Its values straight into the typed row, without a row object, when they pass as they are; a
      // row that does not is read again as an object, whose typing names what is wrong.
      if (this.flat.valuesIn(bytes, start, end, this.values)) {
        const typed = typedValues(this.values);
        if (typed !== null) return typed;
        row = this.flat.rowAgain(bytes, start, end);
      } else row = null;
    } else row = this.flat.rowIn(bytes, start, end);
    if (row === null) {
      const parsed = parse(record.value as Buffer, 'value');
      this.checkColumns(parsed, 'value');
      row = parsed;
    }
    try {
      return typing.typed(row);
    } catch (error) {
      if (error instanceof SluiceError) throw new PoisonRecord(error.message);
      throw error;
    }
  }

  private decodeJson(record: KafkaRecord): RowOp[] {
    if (record.value === null) throw new PoisonRecord('message has no value');
    const row = this.rowOf(this.flat.row(record.value) ?? parse(record.value, 'value'), 'value');
    // No identity: a json record is never a delete, its row was checked whole (a key that does not
    // fit is refused there), and the engine keeps a batch's last row of a key however it is spelled.
    return [{ kind: 'upsert', row }];
  }

  private decodeUpsert(record: KafkaRecord): RowOp[] {
    if (record.key === null) throw new PoisonRecord('message has no key');
    const key = this.keyOf(parse(record.key, 'key'));
    // Judged here, on its own record: a tombstone whose key does not fit would make the engine
    // refuse the whole batch, with no offset, whatever on_error says.
    const identity = this.identityOf(key);
    if (record.value === null) return [{ kind: 'delete', key, identity }];
    const value = parse(record.value, 'value');
    if (!isObject(value)) throw new PoisonRecord('value is not a JSON object');
    // The key's columns come from the message key; a value that disagrees with it is an error.
    const merged: Record<string, unknown> = { ...value };
    for (const [name, v] of Object.entries(key)) {
      if (name in value && !sameScalar(value[name], v)) {
        throw new PoisonRecord(
          `value's "${name}" (${show(value[name])}) differs from the key's (${show(v)})`,
        );
      }
      merged[name] = v;
    }
    return [{ kind: 'upsert', row: this.rowOf(merged, 'value'), identity }];
  }

  private decodeDebezium(record: KafkaRecord): RowOp[] {
    // Debezium follows a delete with a tombstone (null value) for log compaction: nothing to do.
    if (record.value === null) return [];
    let envelope = parse(record.value, 'value', true);
    if (isObject(envelope) && isObject(envelope.payload) && 'schema' in envelope) envelope = envelope.payload;
    if (!isObject(envelope)) throw new PoisonRecord('value is not a Debezium envelope object');
    const op = envelope.op;
    if (typeof op !== 'string' || !DEBEZIUM_OPS.has(op)) {
      throw new PoisonRecord(`Debezium envelope has no valid "op" (got ${show(op)}; expected c, u, d or r)`);
    }
    const before = envelope.before ?? null;
    const after = envelope.after ?? null;
    if (op === 'd') {
      if (!isObject(before)) throw new PoisonRecord('Debezium delete without a "before" row');
      const key = this.keyOf(before);
      return [{ kind: 'delete', key, identity: this.identityOf(key) }];
    }
    if (!isObject(after)) throw new PoisonRecord(`Debezium "${op}" without an "after" row`);
    const row = this.rowOf(after, 'after');
    const identity = this.identityOf(this.keyOf(after));
    const ops: RowOp[] = [];
    if (op === 'u' && isObject(before)) {
      // An update that changes the key removes the old key's row (keys compared as the engine
      // keys them: "01" and 1 are one bigint key).
      const oldKey = this.keyOf(before);
      const oldIdentity = this.identityOf(oldKey);
      if (!sameValueZero(oldIdentity, identity))
        ops.push({ kind: 'delete', key: oldKey, identity: oldIdentity });
    }
    ops.push({ kind: 'upsert', row, identity });
    return ops;
  }

  /** The source's columns from a JSON object; unknown fields are an error, missing ones NULL. */
  private rowOf(value: unknown, what: string): Record<string, unknown> {
    this.checkColumns(value, what);
    const reason = this.spec.checkRow(value);
    if (reason !== null) throw new PoisonRecord(reason);
    return value;
  }

  /** A JSON object naming only the source's columns. */
  private checkColumns(value: unknown, what: string): asserts value is Record<string, unknown> {
    if (!isObject(value)) throw new PoisonRecord(`${what} is not a JSON object`);
    for (const name in value) {
      if (!this.columnSet.has(name)) throw new PoisonRecord(`${what} has unknown column "${name}"`);
    }
  }

  /**
   * A key's identity as the engine keys it; a key that does not fit the source's key columns (a
   * tombstone's `{"id": "abc"}` for a bigint key) is poison, named on its own record.
   */
  private identityOf(key: Record<string, unknown>): unknown {
    const typed = this.spec.keyIdentity;
    const pk = this.spec.primaryKey ?? [];
    if (typed === undefined || typed === null) return keyText(key, pk);
    try {
      return typed(key);
    } catch (error) {
      if (error instanceof SluiceError) throw new PoisonRecord(error.message);
      throw error;
    }
  }

  /** The primary key columns from a key JSON (an object, or a bare scalar for a one-column key). */
  private keyOf(value: unknown): Record<string, unknown> {
    const pk = this.spec.primaryKey ?? [];
    if (!isObject(value)) {
      if (pk.length === 1 && value !== null && typeof value !== 'object') return { [pk[0] as string]: value };
      throw new PoisonRecord(`key is not a JSON object with ${pk.map((c) => `"${c}"`).join(', ')}`);
    }
    const key: Record<string, unknown> = {};
    for (const c of pk) {
      const v = value[c];
      if (v === undefined || v === null) throw new PoisonRecord(`key column "${c}" is missing`);
      key[c] = v;
    }
    return key;
  }
}

/**
 * A key or value as JSON. Text that is not well-formed Unicode — bytes that are not UTF-8, or a
 * lone surrogate escape (`"\ud800"`) — makes the record poison: it could not be stored as the exact
 * text it is checksummed over (see json-codec.ts), and replacing it silently would alter the data.
 * So does a number beyond a double (`envelope`: a Debezium envelope, whose rows are its before and
 * after, names the column).
 */
function parse(bytes: Buffer, what: string, envelope = false): unknown {
  const text = decodeUtf8Strict(bytes);
  if (text === null) {
    throw new PoisonRecord(
      `${what} is not valid UTF-8 (invalid byte sequence at byte ${invalidUtf8Offset(bytes)})`,
    );
  }
  let value: unknown;
  try {
    value = parseJsonExact(text);
  } catch (error) {
    if (error instanceof JsonNumberOutOfRange)
      throw new PoisonRecord(numberOutOfRange(error, what, envelope));
    throw new PoisonRecord(
      `${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // A lone surrogate can only come from a `\u` escape (strict UTF-8 refuses encoded surrogates):
  // without a backslash byte (a native scan) the text cannot hold one.
  const found =
    bytes.indexOf(BACKSLASH) !== -1 && mayHoldLoneSurrogate(text) ? findIllFormedText(value) : null;
  if (found !== null) {
    throw new PoisonRecord(
      `${what} holds text that is not well-formed Unicode: lone surrogate ${describeLoneSurrogate(found.text, found.index)} in ${found.inKey ? 'the key ' : ''}${describeJsonPath(found.path)}`,
    );
  }
  return value;
}

/**
 * A record's number beyond a double (1e400), as the source's typing worded it when such a number
 * reached it as Infinity: the column of a row's field (a Debezium envelope's row is its `before` or
 * `after`, perhaps within `payload`), else the JSON path.
 */
function numberOutOfRange(error: JsonNumberOutOfRange, what: string, envelope: boolean): string {
  const path = error.path;
  let at = 0;
  if (envelope) {
    if (path[at] === 'payload') at++;
    if (path[at] !== 'after' && path[at] !== 'before') at = path.length;
    else at++;
  }
  const field = error.columnAt(at);
  if (what !== 'value' || field === null) return `${what} holds a ${error.message} ${error.detail ?? ''}`;
  const within = field.within !== null ? ` (at ${field.within} of its value)` : '';
  return `invalid value for column "${field.column}": ${error.message}${within}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameValueZero(a: unknown, b: unknown): boolean {
  return a === b || (a !== a && b !== b);
}

function sameScalar(a: unknown, b: unknown): boolean {
  // 5 and 5n, or "5" and 5, name the same key once validated; compare their text.
  return a === b || String(a) === String(b);
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'bigint') return v.toString();
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Up to `limit` bytes of a record's value as well-formed text for the errors relation: cut at a
 * character boundary, bytes that are not UTF-8 shown as `\xHH` (the stored text must itself be
 * well-formed, or it would poison the journal it is written to).
 */
export function rawText(record: KafkaRecord, limit: number): string | null {
  const value = record.value;
  if (value === null) return null;
  let end = Math.min(limit, value.length);
  // Back off to the start of a UTF-8 sequence the cut would split (at most 3 continuation bytes).
  if (end < value.length) {
    for (let i = 0; i < 3 && end > 0 && ((value[end] ?? 0) & 0xc0) === 0x80; i++) end -= 1;
  }
  const text = bytesAsText(value.subarray(0, end));
  return value.length > end ? `${text}…(${value.length} bytes)` : text;
}
