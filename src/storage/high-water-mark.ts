// The high-water mark: the last journal offset and epoch that were committed, kept in a small file
// of its own beside the data file. SQLite's write-ahead log holds the newest commits until they
// are copied into the main file; if that log is deleted or damaged, SQLite opens the older state
// without a word. The mark, written after every commit (a plain write: it survives the process
// being killed; fsynced at checkpoints and shutdown), lets a start see that the journal ends
// before what was acknowledged and refuse, instead of serving less.
//
// Format: 32 bytes — "SLHW", format 1 (u32), offset (f64), epoch (f64), 8 bytes of SHA-256 over
// the first 24.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const HIGH_WATER_MARK_FILE = 'sluice.hwm';

const SIZE = 32;
const MAGIC = 0x57484c53; // "SLHW" little-endian

export interface HighWater {
  readonly offset: number;
  readonly epoch: number;
}

export type HighWaterRead =
  | { readonly kind: 'none' }
  | { readonly kind: 'damaged'; readonly detail: string }
  | { readonly kind: 'mark'; readonly mark: HighWater };

export class HighWaterMark {
  readonly path: string;
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(SIZE);
  private last: HighWater | null = null;

  constructor(dataDir: string) {
    this.path = join(dataDir, HIGH_WATER_MARK_FILE);
    closeSync(openSync(this.path, 'a')); // created if missing; 'r+' then writes at position 0
    this.fd = openSync(this.path, 'r+');
  }

  /** What the file holds now (read once at start, before the first record). */
  read(): HighWaterRead {
    const buf = Buffer.alloc(SIZE + 1);
    const n = readSync(this.fd, buf, 0, SIZE + 1, 0);
    if (n === 0) return { kind: 'none' };
    if (n !== SIZE) return { kind: 'damaged', detail: `it holds ${n} bytes, expected ${SIZE}` };
    if (buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== 1) {
      return { kind: 'damaged', detail: 'it does not start with the high-water mark header' };
    }
    if (!digest(buf.subarray(0, 24)).equals(buf.subarray(24, 32))) {
      return { kind: 'damaged', detail: 'its checksum does not match' };
    }
    return { kind: 'mark', mark: { offset: buf.readDoubleLE(8), epoch: buf.readDoubleLE(16) } };
  }

  /** Records a commit that reached `offset` / `epoch` (no fsync; see the header). */
  record(offset: number, epoch: number): void {
    if (this.last !== null && this.last.offset === offset && this.last.epoch === epoch) return;
    const b = this.buffer;
    b.writeUInt32LE(MAGIC, 0);
    b.writeUInt32LE(1, 4);
    b.writeDoubleLE(offset, 8);
    b.writeDoubleLE(epoch, 16);
    digest(b.subarray(0, 24)).copy(b, 24);
    writeSync(this.fd, b, 0, SIZE, 0);
    this.last = { offset, epoch };
  }

  /** Makes the last record durable against power loss too. */
  sync(): void {
    fsyncSync(this.fd);
  }

  close(): void {
    try {
      this.sync();
    } finally {
      closeSync(this.fd);
    }
  }
}

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest().subarray(0, 8);
}
