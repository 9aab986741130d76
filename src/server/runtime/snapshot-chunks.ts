// Encoded snapshot chunks shared by the subscribers streaming the same frozen version of a view at
// the same epoch. Before, each subscriber encoded every chunk itself: N clients opening a view at
// once (a dashboard's tabs, a fleet of replicas restarting) converted and stringified the same rows
// N times. A chunk's text depends only on the frozen rows, the epoch (and its clock), the chunk size
// and its index, so the first stream to reach a chunk encodes it and the others send that text.
// Chunks are kept only while a stream holds the frozen version, and at most `maxBytes` of them
// (oldest dropped first): a stream that falls far behind the others encodes its chunks again.
import type { FrozenIndex } from '../../ivm/ordered-index.ts';

interface Shared {
  /** Streams holding this frozen version. */
  holds: number;
  /** `${epoch}:${chunk}` → the encoded `snapshot` message. */
  readonly chunks: Map<string, string>;
}

export class SnapshotChunkCache {
  private readonly byFrozen = new Map<FrozenIndex, Shared>();
  /** Every cached chunk, oldest first, for the byte bound. */
  private readonly lru = new Map<
    string,
    { readonly shared: Shared; readonly key: string; readonly bytes: number }
  >();
  private bytes = 0;
  private serial = 0;
  /** Rows converted and encoded into snapshot chunks (counted for tests and metrics). */
  rowsEncoded = 0;
  /** Chunks sent from the cache instead of being encoded again. */
  chunksShared = 0;

  constructor(private readonly maxBytes: number) {}

  /** A stream starts reading `frozen`. */
  hold(frozen: FrozenIndex): void {
    const shared = this.byFrozen.get(frozen);
    if (shared !== undefined) shared.holds++;
    else this.byFrozen.set(frozen, { holds: 1, chunks: new Map() });
  }

  /** A stream is done with `frozen`: the last one drops its chunks. */
  release(frozen: FrozenIndex): void {
    const shared = this.byFrozen.get(frozen);
    if (shared === undefined) return;
    if (--shared.holds > 0) return;
    this.byFrozen.delete(frozen);
    for (const [id, entry] of this.lru) {
      if (entry.shared !== shared) continue;
      this.lru.delete(id);
      this.bytes -= entry.bytes;
    }
  }

  /** The chunk's text: from the cache, or `encode(rows)` once and kept for the other streams. */
  chunk(frozen: FrozenIndex, epoch: number, index: number, rows: number, encode: () => string): string {
    const shared = this.byFrozen.get(frozen);
    const key = `${epoch}:${index}`;
    const cached = shared?.chunks.get(key);
    if (cached !== undefined) {
      this.chunksShared++;
      return cached;
    }
    const text = encode();
    this.rowsEncoded += rows;
    // Only worth keeping while another stream may still read it; one larger than the bound is not kept.
    if (shared === undefined || shared.holds < 2 || text.length > this.maxBytes) return text;
    shared.chunks.set(key, text);
    this.lru.set(`${this.serial++}`, { shared, key, bytes: text.length });
    this.bytes += text.length;
    for (const [id, entry] of this.lru) {
      if (this.bytes <= this.maxBytes) break;
      this.lru.delete(id);
      entry.shared.chunks.delete(entry.key);
      this.bytes -= entry.bytes;
    }
    return text;
  }

  /** Characters of encoded chunks held (at most `maxBytes`). */
  get heldBytes(): number {
    return this.bytes;
  }
}
