// Checkpoints written off the main thread: the engine's state is taken at once (one epoch), its
// values are encoded here in short slices, and a worker thread (checkpoint-worker.ts) writes them
// to the checkpoint file over a connection of its own and commits. The main thread keeps its own
// connection for recovery, reads and the synchronous checkpoint at shutdown.
//
// Memory is bounded: at most MAX_BATCHES_IN_FLIGHT batches of encoded entries wait for the worker.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RuntimeLogger } from './types.ts';
import { SluiceError, type ErrorCode } from '../../common/errors.ts';
import { encodeStored } from '../../common/json-codec.ts';
import { entryReader } from '../../common/state-delta.ts';
import type { Value } from '../../common/types.ts';
import { encodeOne } from '../../common/value-key.ts';
import { isValueKeyReader } from '../../ivm/cow-snapshot.ts';
import { CHECKPOINT_SLICE_MS } from '../../storage/checkpoint-format.ts';
import { TableBlocks, type TableBlock } from '../../storage/table-blocks.ts';
import type { CheckpointTransactionStats } from '../../storage/checkpoint-transaction.ts';
import {
  checkpointHeader,
  type CheckpointSource,
  type CheckpointStore,
  type CheckpointWriteStats,
} from '../../storage/checkpoint-store.ts';
import {
  ABORTED_WRITE,
  BUSY,
  FLAG_BYTES,
  RELEASED,
  type FromWorker,
  type ToWorker,
  type WireError,
  type WriterSettings,
} from './checkpoint-protocol.ts';

/** Entries per message to the worker. */
const BATCH_ENTRIES = 2048;
/** Entries read from a state delta at a time (the slice's clock is read once a batch). */
const READ_BATCH = 256;
/**
 * Entries a slice handles at most (read and encoded, or deleted), whatever the clock says: on a
 * loaded machine the clock also counts time the thread was not running, so a slice cut by the clock
 * alone could be any amount of work. At ≈0.4 µs an entry written whole and ≈2.4 µs an entry of a
 * large incremental write (the server bench), 8,192 entries are ≈3–20 ms of the thread's work.
 */
export const SLICE_ENTRIES = 8192;
/**
 * Of those, entries encoded one by one as stored JSON (an incremental write's changed rows, a view's
 * groups) a slice takes at most this many: each costs about six times a row put into a column block
 * (≈2.4 µs against ≈0.4 µs), so 8,192 of them were slices of 10–20 ms, and on the server bench an
 * incremental checkpoint's slices were what kept the ingest answers' p99 above 10 ms. 2,048 are
 * about 5 ms.
 */
export const SLICE_ROW_ENTRIES = 2048;
/** What an entry encoded as stored JSON counts for against SLICE_ENTRIES. */
const ROW_ENTRY_WORK = SLICE_ENTRIES / SLICE_ROW_ENTRIES;
/** Column blocks per message (each of up to 2,048 rows, about 64 KB). */
const BLOCKS_PER_MESSAGE = 16;
/** Messages sent and not yet written: bounds the encoded entries held between the threads. */
const MAX_BATCHES_IN_FLIGHT = 4;
/** How long shutdown waits for the worker to leave an abandoned write. */
const ABORT_WAIT_MS = 10_000;

type Outcome =
  { readonly stats: CheckpointTransactionStats; readonly durable: boolean } | { readonly error: SluiceError };

interface Pending {
  readonly write: number;
  resolveAck: (() => void) | null;
  /** Ends the wait for the server's ingest answers (`ingestAnswered`) early: the write failed. */
  resolveTurn: (() => void) | null;
  readonly settle: (outcome: Outcome) => void;
  inFlight: number;
  /** Set when the worker reported a failure or died: the encoding loop stops at its next pause. */
  failed: SluiceError | null;
}

/** The process's one writer thread, shared by every runtime's checkpoint file. */
class SharedWorker {
  readonly worker: Worker;
  readonly files = new Map<number, OffThreadCheckpointWriter>();

  private gone = false;

  constructor(entry: string, onGone: (error: unknown) => void) {
    this.worker = startWorker(entry);
    this.worker.unref();
    this.worker.on('message', (message: FromWorker) => this.files.get(message.file)?.heard(message));
    // A crash emits 'error' and then 'exit': the files hear of one death.
    const gone = (error: unknown): void => {
      if (this.gone) return;
      this.gone = true;
      onGone(error);
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new Error(`the checkpoint writer thread exited (code ${code})`)));
  }

  post(message: ToWorker, transfer?: readonly ArrayBuffer[]): void {
    this.worker.postMessage(message, transfer);
  }
}

/**
 * The worker is this module's sibling: `.js` in the built package (`.mjs` beside a bundle that built
 * it as a second entry); `.ts` when run from the sources under tsx, whose loader a worker thread
 * does not inherit on Node 20, so its CommonJS hook is registered in the thread first. Null when
 * there is none (a bundle without it): checkpoints are then written on the main thread.
 */
export function checkpointWorkerEntry(): string | null {
  const self = import.meta.url;
  const names = self.endsWith('.ts')
    ? ['checkpoint-worker.ts']
    : ['checkpoint-worker.js', 'checkpoint-worker.mjs'];
  for (const name of names) {
    const path = fileURLToPath(new URL(`./${name}`, self));
    if (existsSync(path)) return path;
  }
  return null;
}

function startWorker(entry: string): Worker {
  if (!entry.endsWith('.ts')) return new Worker(entry);
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const boot = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`;
  return new Worker(boot, { eval: true });
}

let shared: SharedWorker | null = null;
let nextFile = 1;
let nextWrite = 1;
/** Writes whose thread is to die right after their start (`failWriterThreadForTests`). */
let threadDeathsForTests = 0;

/**
 * Test hook: the writer thread of each of the next `writes` checkpoint writes exits as soon as the
 * write begins, as a crashed thread would (a real thread death, not a stand-in for SQLite).
 */
export function failWriterThreadForTests(writes: number): void {
  threadDeathsForTests = writes;
}

function sharedWorker(entry: string): SharedWorker {
  if (shared !== null) return shared;
  const created: SharedWorker = new SharedWorker(entry, (error) => {
    if (shared === created) shared = null;
    for (const writer of created.files.values()) writer.lost(error);
  });
  shared = created;
  return created;
}

export class OffThreadCheckpointWriter {
  private readonly file = nextFile++;
  private readonly flags = new Int32Array(new SharedArrayBuffer(FLAG_BYTES));
  private worker: SharedWorker | null = null;
  private pending: Pending | null = null;
  private aborted = false;
  private deaths = 0;
  /** Whether the last write completed survives a power loss (the thread made a durable point after it). */
  private lastDurable = false;
  /** Answers to `settingsForTests`, oldest first. */
  private readonly settingsWaiters: ((settings: WriterSettings) => void)[] = [];

  constructor(
    private readonly entry: string,
    private readonly path: string,
    private readonly store: CheckpointStore,
    private readonly logger: RuntimeLogger,
    private readonly betweenSlices: () => void = () => {},
    /**
     * Settles once the ingest requests applied so far are answered; null when none waits. Each slice
     * waits for it once before it starts (then a loop turn more, for the requests that came
     * meanwhile), so an answer waits behind one slice at most, not one slice in each loop turn of
     * its group commit; once only, so steady ingest slows the checkpoint down but never stops it.
     */
    private readonly ingestAnswered: () => Promise<void> | null = () => null,
  ) {}

  /** True while a write is in progress. */
  get writing(): boolean {
    return this.pending !== null;
  }

  /**
   * Whether the last write completed survives a power loss: the thread copied the WAL into the file
   * with its fsyncs after it (asked for, or the WAL outgrew its bound). Otherwise it survives a
   * process kill only, until the next durable point.
   */
  get lastWriteDurable(): boolean {
    return this.lastDurable;
  }

  /** Test hook: the thread's connection's pragmas, read back from it. */
  settingsForTests(): Promise<WriterSettings> {
    const worker = this.attach();
    return new Promise((resolve) => {
      this.settingsWaiters.push(resolve);
      worker.post({ t: 'settings', file: this.file });
    });
  }

  /** Times the writer thread died since the last write it completed. */
  get consecutiveThreadDeaths(): number {
    return this.deaths;
  }

  /**
   * Takes a checkpoint from `source` (full when the store needs one) and has the worker write it.
   * The main thread's share is taking the state and encoding it, in slices of `sliceMs`. `durable`:
   * the thread makes the file durable after the COMMIT (`lastWriteDurable`).
   */
  async write(
    source: CheckpointSource,
    journalOffset: number,
    sliceMs = CHECKPOINT_SLICE_MS,
    durable = false,
  ): Promise<CheckpointWriteStats> {
    if (this.pending !== null)
      throw new SluiceError('INTERNAL_ERROR', 'a checkpoint is already being written');
    const started = performance.now();
    const worker = this.attach();
    const full = this.store.needsFull;
    const cp = source.takeCheckpoint(full);
    const takeMs = performance.now() - started;
    const write = nextWrite++;
    this.aborted = false;
    this.lastDurable = false;
    let settle!: Pending['settle'];
    const outcome = new Promise<Outcome>((resolve) => {
      settle = resolve;
    });
    const pending: Pending = {
      write,
      resolveAck: null,
      resolveTurn: null,
      settle,
      inFlight: 0,
      failed: null,
    };
    this.pending = pending;
    let busyMs = 0;
    let longestSliceMs = 0;
    // Work counted per slice (entries read or deleted in it), for `maxSliceEntries`; and the slice's
    // work against SLICE_ENTRIES, an entry encoded as stored JSON counting ROW_ENTRY_WORK.
    let sliceEntries = 0;
    let sliceWork = 0;
    let maxSliceEntries = 0;
    let slices = 0;
    let ingestWaits = 0;
    // The first slice includes taking the state.
    let sliceStart = started;
    const endSlice = (): void => {
      const ms = performance.now() - sliceStart;
      busyMs += ms;
      if (ms > longestSliceMs) longestSliceMs = ms;
      if (sliceEntries > maxSliceEntries) maxSliceEntries = sliceEntries;
      sliceEntries = 0;
      sliceWork = 0;
      slices++;
    };
    // Between slices and while waiting for the worker the event loop runs.
    const sliceOver = (): boolean => sliceWork >= SLICE_ENTRIES || performance.now() - sliceStart >= sliceMs;
    const pause = async (forAck: boolean): Promise<void> => {
      endSlice();
      if (forAck) await new Promise<void>((resolve) => (pending.resolveAck = resolve));
      else await new Promise((resolve) => setImmediate(resolve));
      const answered = pending.failed === null ? this.ingestAnswered() : null;
      if (answered !== null) {
        ingestWaits++;
        await new Promise<void>((resolve) => {
          pending.resolveTurn = resolve;
          void answered.then(resolve);
        });
        pending.resolveTurn = null;
        // Resumed in the check phase: the requests read in the same poll phase are applied first.
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (pending.failed !== null) throw pending.failed;
      if (this.aborted || this.pending !== pending) {
        throw new SluiceError('STATE_ERROR', 'the checkpoint was abandoned (shutdown)');
      }
      this.betweenSlices();
      sliceStart = performance.now();
    };
    // The state being sent; `replaceAll` goes with its first message only.
    const part: { stateId: string; replaceAll: boolean | null } = { stateId: '', replaceAll: null };
    const sent = async (): Promise<void> => {
      part.replaceAll = null;
      pending.inFlight++;
      while (pending.inFlight >= MAX_BATCHES_IN_FLIGHT) await pause(true);
    };
    const send = async (
      removes: readonly string[],
      keys: readonly string[],
      texts: readonly string[],
    ): Promise<void> => {
      const { stateId, replaceAll } = part;
      worker.post({ t: 'batch', file: this.file, write, stateId, replaceAll, removes, keys, texts });
      await sent();
    };
    // A table's column blocks, several a message (each message wakes the thread, and on a busy
    // machine costs this one its core for a while); their buffers move to the worker, no copy.
    let blocks: TableBlock[] = [];
    const sendBlocks = async (): Promise<void> => {
      if (blocks.length === 0) return;
      const { stateId, replaceAll } = part;
      const transfer = blocks.map((b) => b.bytes.buffer as ArrayBuffer);
      worker.post({ t: 'blocks', file: this.file, write, stateId, replaceAll, blocks }, transfer);
      blocks = [];
      await sent();
    };
    try {
      // The delta is taken: from here a failure must make the next checkpoint full.
      worker.post({ t: 'begin', file: this.file, write, header: checkpointHeader(cp, journalOffset, full) });
      if (threadDeathsForTests > 0) {
        threadDeathsForTests--;
        worker.post({ t: 'exit-for-test' });
      }
      const readKeys: string[] = [];
      const readValues: unknown[] = [];
      const readRawKeys: Value[] = [];
      for (const o of cp.objects) {
        for (const { stateId, delta } of o.parts) {
          part.stateId = stateId;
          part.replaceAll = delta.replaceAll;
          if (!delta.replaceAll) {
            // Each batch takes no more than the slice has left (a slice is over before it is spent).
            for (let i = 0; i < delta.deletes.length;) {
              const removes = delta.deletes.slice(
                i,
                i + Math.max(1, Math.min(BATCH_ENTRIES, SLICE_ENTRIES - sliceWork)),
              );
              i += removes.length;
              sliceEntries += removes.length;
              sliceWork += removes.length;
              await send(removes, [], []);
              if (sliceOver()) await pause(false);
            }
          }
          // A table written whole goes as column blocks built here from its rows: no text per row.
          let table = TableBlocks.of(stateId, delta.replaceAll);
          let keys: string[] = [];
          let texts: string[] = [];
          // Read a batch at a time (a snapshot's rows with no tuple or generator step per entry);
          // the slice's clock is read once a batch, and a batch is no more than the slice has left
          // (never 0: a read of none is the end of the part).
          const reader = entryReader(delta.upserts);
          // A table's keys as it holds them, when its reader offers them: their text is written
          // straight into the blocks, with no string an entry (see cow-snapshot.ts's ValueKeyReader).
          const valueKeys = table !== null && isValueKeyReader(reader) ? reader : null;
          // What an entry read now costs: a table's row into a block, else one encoded as JSON.
          const entryWork = (): number => (table !== null ? 1 : ROW_ENTRY_WORK);
          const readMax = (): number =>
            Math.max(1, Math.min(READ_BATCH, Math.floor((SLICE_ENTRIES - sliceWork) / entryWork())));
          const readBatch = (): number =>
            valueKeys !== null
              ? valueKeys.readRaw(readRawKeys, readValues, readMax())
              : reader.read(readKeys, readValues, readMax());
          try {
            for (let got = readBatch(); got > 0; got = readBatch()) {
              sliceEntries += got;
              sliceWork += got * entryWork();
              for (let r = 0; r < got; r++) {
                const value = readValues[r];
                const added =
                  table === null
                    ? false
                    : valueKeys !== null
                      ? table.addValueKey(readRawKeys[r] as Value, value)
                      : table.add(readKeys[r] as string, value);
                if (table !== null && !added) {
                  const last = table.finish();
                  if (last !== null) blocks.push(last);
                  await sendBlocks();
                  table = null;
                }
                if (table === null) {
                  const key =
                    valueKeys !== null ? encodeOne(readRawKeys[r] as Value) : (readKeys[r] as string);
                  keys.push(key);
                  texts.push(encodeStored(value));
                  if (keys.length === BATCH_ENTRIES) {
                    await send([], keys, texts);
                    keys = [];
                    texts = [];
                  }
                } else {
                  const block = table.ready();
                  if (block !== null && blocks.push(block) === BLOCKS_PER_MESSAGE) await sendBlocks();
                }
              }
              if (sliceOver()) {
                await sendBlocks(); // the worker writes them while epochs run
                await pause(false);
              }
            }
          } finally {
            reader.close();
            readValues.fill(undefined); // no rows held past the part
            readRawKeys.fill(0);
          }
          const last = table?.finish() ?? null;
          if (last !== null) blocks.push(last);
          await sendBlocks();
          if (part.replaceAll !== null || keys.length > 0) await send([], keys, texts);
        }
      }
      endSlice();
      worker.post({ t: 'commit', file: this.file, write, durable });
      const result = await outcome;
      if ('error' in result) throw result.error;
      const stats = result.stats;
      this.lastDurable = result.durable;
      this.deaths = 0;
      if (stats.full) this.store.fullWritten();
      return {
        ...stats,
        ms: performance.now() - started,
        busyMs,
        takeMs,
        longestSliceMs,
        slices,
        maxSliceEntries,
        ingestWaits,
      };
    } catch (error) {
      this.store.requireFull();
      if (this.pending === pending) worker.post({ t: 'abort', file: this.file, write });
      throw error;
    } finally {
      if (this.pending === pending) this.pending = null;
    }
  }

  /**
   * Abandons the write in progress and waits (blocking, at most ABORT_WAIT_MS) until the worker has
   * rolled it back, so the main thread's connection can write a checkpoint of its own.
   */
  abort(): void {
    const pending = this.pending;
    if (pending === null) return;
    this.aborted = true;
    this.store.requireFull();
    Atomics.store(this.flags, ABORTED_WRITE, pending.write);
    this.worker?.post({ t: 'abort', file: this.file, write: pending.write });
    const deadline = performance.now() + ABORT_WAIT_MS;
    while (Atomics.load(this.flags, BUSY) === 1) {
      const left = deadline - performance.now();
      if (left <= 0) {
        this.logger.error(
          { waitedMs: ABORT_WAIT_MS },
          'the checkpoint writer thread did not leave an abandoned write in time',
        );
        break;
      }
      Atomics.wait(this.flags, BUSY, 1, left);
    }
    this.pending = null;
    this.fail(pending, new SluiceError('STATE_ERROR', 'the checkpoint was abandoned (shutdown)'));
  }

  /**
   * Has the worker close its connection to this file (after `abort` when a write was running) and
   * waits (blocking, at most ABORT_WAIT_MS) until it has: whoever closes the runtime may then move or
   * delete the data directory.
   */
  close(): void {
    this.abort();
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    worker.files.delete(this.file);
    worker.post({ t: 'release', file: this.file });
    if (worker.files.size === 0 && shared === worker) shared = null;
    const deadline = performance.now() + ABORT_WAIT_MS;
    while (Atomics.load(this.flags, RELEASED) === 0) {
      const left = deadline - performance.now();
      if (left <= 0) {
        this.logger.error(
          { waitedMs: ABORT_WAIT_MS },
          'the checkpoint writer thread did not close its connection in time',
        );
        break;
      }
      Atomics.wait(this.flags, RELEASED, 0, left);
    }
  }

  /** A message from the worker about this file. */
  heard(message: FromWorker): void {
    if (message.t === 'settings') {
      this.settingsWaiters.shift()?.(message.settings);
      return;
    }
    const pending = this.pending;
    if (pending === null || message.write !== pending.write) return;
    if (message.t === 'ack') {
      pending.inFlight--;
      const resolve = pending.resolveAck;
      pending.resolveAck = null;
      resolve?.();
    } else if (message.t === 'done') {
      pending.settle({ stats: message.stats, durable: message.durable });
    } else {
      this.fail(pending, fromWire(message.error));
    }
  }

  /** The worker thread died: the write in progress fails, and the next one starts a new thread. */
  lost(error: unknown): void {
    this.worker = null;
    this.deaths++;
    const pending = this.pending;
    if (pending === null) return;
    const detail = error instanceof Error ? error.message : String(error);
    this.fail(pending, new SluiceError('STATE_ERROR', 'the checkpoint writer thread stopped', { detail }));
  }

  private fail(pending: Pending, error: SluiceError): void {
    pending.failed = error;
    pending.settle({ error });
    const resolve = pending.resolveAck;
    pending.resolveAck = null;
    resolve?.();
    const resolveTurn = pending.resolveTurn;
    pending.resolveTurn = null;
    resolveTurn?.();
  }

  private attach(): SharedWorker {
    if (this.worker !== null) return this.worker;
    const worker = sharedWorker(this.entry);
    worker.files.set(this.file, this);
    Atomics.store(this.flags, BUSY, 0);
    Atomics.store(this.flags, ABORTED_WRITE, 0);
    Atomics.store(this.flags, RELEASED, 0);
    worker.post({
      t: 'open',
      file: this.file,
      path: this.path,
      flags: this.flags.buffer as SharedArrayBuffer,
    });
    this.worker = worker;
    return worker;
  }
}

function fromWire(error: WireError): SluiceError {
  return new SluiceError(error.code as ErrorCode, error.message, {
    ...(error.detail !== undefined ? { detail: error.detail } : {}),
    ...(error.hint !== undefined ? { hint: error.hint } : {}),
  });
}
