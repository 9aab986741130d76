// The idempotency window of table ingest: a client's `Idempotency-Key` → the answer its request got,
// for a bounded time, count and memory. A request repeating a known key gets that answer back and
// applies nothing; a request still in its group commit is waited for, so concurrent duplicates apply
// once. The memory half is rebuilt at start from the durable half (src/storage/idempotency-store.ts),
// which commits with the batch itself.
import { createHash } from 'node:crypto';
import { SluiceError } from '../common/errors.ts';
import type { IdempotencyRecord, IdempotencyStore } from '../storage/idempotency-store.ts';

/** Longest key, in characters (the header is printable ASCII, so also in bytes). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Printable ASCII (space allowed inside, not at either end: HTTP trims it). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export interface IdempotencyLimits {
  /** How long a key is remembered after its request applied. */
  readonly windowMs: number;
  /** Most keys remembered; beyond it the oldest are forgotten early. */
  readonly maxKeys: number;
  /** Most bytes (estimated) the remembered keys take in memory; beyond it the oldest go. */
  readonly maxBytes: number;
}

export interface IngestAnswer {
  readonly accepted: number;
  readonly epoch: number;
}

/** What a keyed request identifies itself by. */
export interface IdempotentRequest {
  readonly key: string;
  /** requestFingerprint() of what the request asks. */
  readonly fingerprint: string;
}

interface Entry {
  readonly seq: number;
  readonly fingerprint: string;
  readonly target: string;
  readonly answer: IngestAnswer;
  readonly at: number;
  readonly bytes: number;
  /** Until its group commit settles: replays wait for it (and fail with it). */
  pending: Promise<IngestAnswer> | null;
}

/**
 * The `Idempotency-Key` header's values (Node's `headersDistinct`) as a key, or null without one.
 * A key sent twice, empty, too long or not printable ASCII is BAD_IDEMPOTENCY_KEY.
 */
export function idempotencyKeyOf(values: readonly string[] | undefined): string | null {
  if (values === undefined || values.length === 0) return null;
  if (values.length > 1) throw invalidKey(`the request carries it ${values.length} times`);
  const key = values[0] ?? '';
  if (key.length === 0) throw invalidKey('it is empty');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidKey(`it is ${key.length} characters long, more than ${MAX_IDEMPOTENCY_KEY_LENGTH}`);
  }
  if (!KEY.test(key)) throw invalidKey('it holds a character that is not printable ASCII');
  return key;
}

/** BAD_IDEMPOTENCY_KEY, saying why. */
export function invalidKey(reason: string): SluiceError {
  return new SluiceError('BAD_IDEMPOTENCY_KEY', `invalid Idempotency-Key header: ${reason}`, {
    hint: `a key is 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (e.g. a UUID), sent once per request`,
  });
}

/** SHA-256 of the request body's exact bytes (computed as the body is read). */
export function bodyHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url');
}

/** What a keyed ingest request asks: its table and the hash of its body. */
export function requestFingerprint(table: string, body: string): string {
  return createHash('sha256').update(`${table}\u0000${body}`).digest('base64url');
}

export class IdempotencyWindow {
  /** Key → entry, in arrival (seq) order: the oldest first. */
  private readonly entries = new Map<string, Entry>();
  private bytesHeld = 0;
  /** The seq of the last key recorded (0: none yet). */
  private lastSeq = 0;
  /** Keys forgotten because the window was full before they expired (metrics, tests). */
  evictedEarly = 0;

  constructor(
    private readonly store: IdempotencyStore,
    readonly limits: IdempotencyLimits,
    private readonly now: () => number = Date.now,
  ) {
    if (!(limits.windowMs >= 0 && limits.maxKeys >= 1 && limits.maxBytes >= 1)) {
      throw new Error(
        `invalid idempotency window: ${limits.windowMs} ms, ${limits.maxKeys} keys, ${limits.maxBytes} bytes`,
      );
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.bytesHeld;
  }

  /**
   * Rebuilds the window from the stored keys at start: the newest ones within every bound; the rest
   * are deleted (the caller runs this in a transaction).
   */
  load(): void {
    const now = this.now();
    // At most maxKeys rows are read: the newest, newest first.
    const records = this.store.newest(this.limits.maxKeys);
    let kept = 0;
    let bytes = 0;
    for (const record of records) {
      const size = entryBytes(record.key, record.target, record.fingerprint);
      if (now - record.at > this.limits.windowMs || bytes + size > this.limits.maxBytes) break;
      kept += 1;
      bytes += size;
    }
    this.entries.clear();
    this.bytesHeld = 0;
    for (let i = kept - 1; i >= 0; i--) {
      const r = records[i] as IdempotencyRecord;
      this.insert(r.key, {
        seq: r.seq,
        fingerprint: r.fingerprint,
        target: r.target,
        answer: { accepted: r.accepted, epoch: r.epoch },
        at: r.at,
        bytes: entryBytes(r.key, r.target, r.fingerprint),
        pending: null,
      });
    }
    this.lastSeq = records[0]?.seq ?? 0;
    this.store.pruneBefore(this.oldestSeq());
  }

  /**
   * The answer a request with this key already got (or will get, once its commit settles), or null
   * when the key is not remembered. The same key asking something else is IDEMPOTENCY_KEY_REUSED.
   */
  lookup(request: IdempotentRequest): Promise<IngestAnswer> | null {
    const entry = this.entries.get(request.key);
    if (entry === undefined) return null;
    if (entry.pending === null && this.now() - entry.at > this.limits.windowMs) {
      this.forget(request.key, entry);
      return null;
    }
    if (entry.fingerprint !== request.fingerprint) {
      throw new SluiceError(
        'IDEMPOTENCY_KEY_REUSED',
        `idempotency key "${request.key}" was already used for a different request`,
        {
          detail: `it was used for a batch for table "${entry.target}" (epoch ${entry.answer.epoch}) whose body differs from this one`,
          hint: 'a retry must send the same body to the same table; use a new key for a new batch',
        },
      );
    }
    return entry.pending ?? Promise.resolve({ ...entry.answer });
  }

  /**
   * Remembers a request that applied as `answer` and commits with its group (`done`). Runs inside
   * the batch's open transaction: the key is durable exactly when the batch is. If the commit fails,
   * the key is forgotten again (nothing was applied, so it may be retried).
   */
  record(
    request: IdempotentRequest,
    target: string,
    answer: IngestAnswer,
    done: Promise<IngestAnswer>,
  ): void {
    const at = this.now();
    const previous = this.entries.get(request.key);
    if (previous !== undefined) this.forget(request.key, previous);
    const seq = this.store.record({
      key: request.key,
      fingerprint: request.fingerprint,
      target,
      accepted: answer.accepted,
      epoch: answer.epoch,
      at,
    });
    const entry: Entry = {
      seq,
      fingerprint: request.fingerprint,
      target,
      answer: { accepted: answer.accepted, epoch: answer.epoch },
      at,
      bytes: entryBytes(request.key, target, request.fingerprint),
      pending: done,
    };
    this.lastSeq = Math.max(this.lastSeq, seq);
    this.insert(request.key, entry);
    done.then(
      () => {
        entry.pending = null;
      },
      () => {
        // The transaction holding it rolled back: the batch was not applied, the key is free.
        if (this.entries.get(request.key) === entry) this.forget(request.key, entry);
      },
    );
    this.trim();
  }

  /** Forgets expired keys, in memory and on disk (the caller runs this in a transaction). */
  prune(): void {
    this.trim();
  }

  /** Drops the oldest keys while they are expired or the window is over a bound; never a pending one. */
  private trim(): void {
    const now = this.now();
    let dropped = false;
    for (const [key, entry] of this.entries) {
      const expired = now - entry.at > this.limits.windowMs;
      const over = this.entries.size > this.limits.maxKeys || this.bytesHeld > this.limits.maxBytes;
      if (entry.pending !== null || (!expired && !over)) break;
      if (!expired) this.evictedEarly += 1;
      this.forget(key, entry);
      dropped = true;
    }
    if (dropped) this.store.pruneBefore(this.oldestSeq());
  }

  private oldestSeq(): number {
    for (const entry of this.entries.values()) return entry.seq;
    return this.lastSeq + 1;
  }

  private insert(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    this.bytesHeld += entry.bytes;
  }

  private forget(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytesHeld -= entry.bytes;
  }
}

/** Memory one remembered key takes, estimated: its strings (UTF-16 at worst) and the entry around them. */
function entryBytes(key: string, target: string, fingerprint: string): number {
  return 2 * (key.length + target.length + fingerprint.length) + 160;
}
