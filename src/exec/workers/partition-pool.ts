// The partitions of an engine's partitioned Reduces (the `workers` setting): partition 0 on the main
// thread itself, each other one on a worker thread (started on first use) hosting that partition of
// every partitioned Reduce — so N workers keep N cores busy, not N threads and an idle main thread.
// Calls are synchronous — an epoch is — : the main thread hands a request to each thread it needs (a
// step written into the thread's shared request words, anything else posted on its request port,
// then the words' sequence number bumped and notified: the thread waits on it with Atomics.wait,
// outside its event loop), serves partition 0's request itself, then blocks on each thread's flag and
// reads the answer off its reply port (receiveMessageOnPort). The threads are unref'd: an engine that
// is never closed does not keep the process alive; `close` ends them.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { SluiceError, knownErrorCode } from '../../common/errors.ts';
import { PartitionHost, type RawStep } from './partition-host.ts';
import {
  ANSWERED,
  ENDED,
  KIND_MESSAGE,
  KIND_STEP,
  LOCAL_PARTITION,
  REQ_COUNT,
  REQ_H,
  REQ_KIND,
  REQ_NULLS,
  REQ_SEQ,
  REQ_BATCH,
  REQ_WIDTH,
  REP_COUNT,
  REP_FOLDS,
  REP_NET,
  REP_NULLS,
  SHARED_ANSWER,
  type FromWorker,
  type Request,
  type ToWorker,
} from './partition-protocol.ts';

/** The most workers the setting allows. */
export const MAX_WORKERS = 64;
/** How long a call waits for a thread before the epoch fails (a thread that died never answers). */
const ANSWER_TIMEOUT_MS = 120_000;

interface Thread {
  readonly worker: Worker;
  /** The answers' port (this end). */
  readonly port: MessagePort;
  /** The requests' port (this end). */
  readonly requests: MessagePort;
}

/** The number of workers a setting asks for, validated: an integer 1..MAX_WORKERS. */
export function validWorkers(value: unknown, what = 'workers'): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_WORKERS)
    throw new SluiceError(
      'INVALID_OPTION',
      `${what} must be an integer from 1 to ${MAX_WORKERS}, not ${JSON.stringify(value) ?? String(value)}`,
    );
  return n;
}

export class PartitionPool {
  /** By partition: the thread hosting it (none at LOCAL_PARTITION). */
  private threads: (Thread | null)[] | null = null;
  private readonly local = new PartitionHost(() => {
    throw new SluiceError('INTERNAL_ERROR', "the main thread's partition cannot end");
  });
  private readonly flags: Int32Array;
  private readonly requestWords: Int32Array;
  private nextHandle = 1;
  /** How many step answers came in the shared reply buffers, and how many as messages (for tests). */
  readonly answers = { inBuffers: 0, asMessages: 0 };
  private closed = false;

  constructor(readonly partitions: number) {
    this.flags = new Int32Array(new SharedArrayBuffer(4 * partitions));
    this.requestWords = new Int32Array(new SharedArrayBuffer(4 * REQ_WIDTH * partitions));
  }

  /** A new handle for a partitioned Reduce (its id in every thread). */
  handle(): number {
    return this.nextHandle++;
  }

  private started(): (Thread | null)[] {
    if (this.closed) throw new SluiceError('INTERNAL_ERROR', 'the engine is closed: its workers have ended');
    if (this.threads !== null) return this.threads;
    const entry = partitionWorkerEntry();
    const threads: (Thread | null)[] = [null];
    for (let slot = LOCAL_PARTITION + 1; slot < this.partitions; slot++) {
      const { port1, port2 } = new MessageChannel();
      const requests = new MessageChannel();
      const data = {
        reply: port2,
        requests: requests.port2,
        flags: this.flags,
        words: this.requestWords,
        slot,
      };
      const worker = startWorker(entry, data, [port2, requests.port2]);
      worker.unref();
      port1.unref();
      requests.port1.unref();
      // A thread's death is noticed by the call waiting for it (ANSWER_TIMEOUT_MS): no listener here
      // would run while the main thread blocks anyway. An unhandled 'error' must not crash the process.
      worker.on('error', () => {});
      threads.push({ worker, port: port1, requests: requests.port1 });
    }
    this.threads = threads;
    return threads;
  }

  /**
   * Hands `messages[p]` to partition p's thread (null: none), serves partition 0's on this thread,
   * then waits for every answer.
   */
  callEach(messages: readonly (Request | null)[]): (FromWorker | null)[] {
    const threads = this.started();
    const words = this.requestWords;
    for (let p = LOCAL_PARTITION + 1; p < messages.length; p++) {
      const m = messages[p];
      if (m === null || m === undefined) continue;
      // Answered → out (a thread that ended keeps ENDED: the exchanges leave it for the wait below).
      Atomics.compareExchange(this.flags, p, ANSWERED, 0);
      Atomics.compareExchange(this.flags, p, SHARED_ANSWER, 0);
      const base = p * REQ_WIDTH;
      if (m.t === 'shared-step') {
        words[base + REQ_KIND] = KIND_STEP;
        words[base + REQ_H] = m.h;
        words[base + REQ_BATCH] = m.batch;
        words[base + REQ_COUNT] = m.count;
        words[base + REQ_NULLS] = m.nullMask;
      } else {
        words[base + REQ_KIND] = KIND_MESSAGE;
        (threads[p] as Thread).requests.postMessage(m);
      }
      // The bump publishes the fields above (Atomics order the plain writes before it).
      Atomics.add(words, base + REQ_SEQ, 1);
      Atomics.notify(words, base + REQ_SEQ);
    }
    const answers: (FromWorker | null)[] = [this.serveLocal(messages[LOCAL_PARTITION] ?? null)];
    for (let p = LOCAL_PARTITION + 1; p < messages.length; p++) {
      if (messages[p] === null || messages[p] === undefined) {
        answers.push(null);
        continue;
      }
      answers.push(this.await(p, threads[p] as Thread));
    }
    // Every answer read before the first failure is raised: the next call starts from clean flags.
    for (const a of answers)
      if (a !== null && !a.ok) throw new SluiceError(knownErrorCode(a.code), a.message);
    return answers;
  }

  /** The same message to every partition. */
  callAll(message: ToWorker): FromWorker[] {
    return this.callEach(Array.from({ length: this.partitions }, () => message)) as FromWorker[];
  }

  /** Partition 0's answer, served on this thread while the others work on theirs. */
  private serveLocal(m: Request | null): FromWorker | null {
    if (m === null) return null;
    try {
      if (m.t === 'shared-step')
        return localChanges(this.local.sharedStep(m.h, m.batch, m.count, m.nullMask));
      if (m.t === 'step') return localChanges(this.local.step(m));
      return this.local.handle(m).message;
    } catch (error) {
      return {
        ok: false,
        code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR',
        message: error instanceof Error ? error.message : String(error),
      };
    }
  }

  private await(p: number, thread: Thread): FromWorker {
    const deadline = Date.now() + ANSWER_TIMEOUT_MS;
    let flag: number;
    while ((flag = Atomics.load(this.flags, p)) === 0) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new SluiceError(
          'INTERNAL_ERROR',
          `partition worker ${p} did not answer within ${ANSWER_TIMEOUT_MS} ms`,
        );
      Atomics.wait(this.flags, p, 0, Math.min(left, 1000));
    }
    if (flag === ENDED)
      throw new SluiceError(
        'INTERNAL_ERROR',
        `partition worker ${p} has ended: its partition's state is lost`,
      );
    if (flag === SHARED_ANSWER) {
      this.answers.inBuffers++;
      const base = p * REQ_WIDTH;
      return {
        ok: true,
        shared: {
          count: this.requestWords[base + REP_COUNT] as number,
          nullMask: this.requestWords[base + REP_NULLS] as number,
          folds: this.requestWords[base + REP_FOLDS] as number,
          net: this.requestWords[base + REP_NET] as number,
        },
      };
    }
    const got = receiveMessageOnPort(thread.port);
    if (got === undefined)
      throw new SluiceError('INTERNAL_ERROR', `partition worker ${p} raised its flag without an answer`);
    const answer = got.message as FromWorker;
    if ('step' in answer) this.answers.asMessages++;
    return answer;
  }

  /** Ends the threads (idempotent). */
  close(): void {
    this.closed = true;
    const threads = this.threads;
    this.threads = null;
    if (threads === null) return;
    for (const t of threads) {
      if (t === null) continue;
      t.port.close();
      t.requests.close();
      void t.worker.terminate();
    }
  }

  /** Whether the threads were started (for tests: they start on first use). */
  get running(): boolean {
    return this.threads !== null;
  }
}

/** The main thread's partition's step as the merge reads it: its own columns, no copy. */
function localChanges(raw: RawStep): FromWorker {
  return {
    ok: true,
    local: {
      count: raw.weights.length,
      weights: raw.weights,
      net: raw.net,
      touch: raw.touch,
      cols: raw.cols,
      nulls: raw.cols.map(() => null),
      errors: raw.errors,
      folds: raw.folds,
    },
  };
}

/**
 * The worker is this module's sibling: `.js` in the built package, `.ts` from the sources under
 * tsx, whose loader a worker thread does not inherit on Node 20 (registered in the thread first).
 */
function partitionWorkerEntry(): string {
  const self = import.meta.url;
  const names = self.endsWith('.ts')
    ? ['partition-worker.ts']
    : ['partition-worker.js', 'partition-worker.mjs'];
  for (const name of names) {
    const path = fileURLToPath(new URL(`./${name}`, self));
    if (existsSync(path)) return path;
  }
  throw new SluiceError('INTERNAL_ERROR', 'the partition worker module is missing beside partition-pool');
}

function startWorker(entry: string, workerData: unknown, transferList: MessagePort[]): Worker {
  if (!entry.endsWith('.ts')) return new Worker(entry, { workerData, transferList });
  // tsx's ES module loader (its CommonJS hook cannot load the ESM-only packages the Reduce's modules
  // import), registered in the thread before the entry is imported.
  const api = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const boot =
    `import(${JSON.stringify(pathToFileURL(api).href)})` +
    `.then((tsx) => tsx.register())` +
    `.then(() => import(${JSON.stringify(pathToFileURL(entry).href)}));`;
  return new Worker(boot, { eval: true, workerData, transferList });
}
