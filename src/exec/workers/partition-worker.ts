// A partition worker thread: it hosts one partition of each partitioned Reduce (partition-host.ts) and
// steps it on the rows of each batch that belong to it. It waits for requests on its shared request
// words (Atomics.wait, never returning to its event loop: no message dispatch per step); every request
// is answered on the reply port, then the thread's flag is raised, so the main thread can wait for it
// synchronously (partition-pool.ts).
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { SluiceError } from '../../common/errors.ts';
import { PartitionHost, answerStep, writeReply, type Answer, type RawStep } from './partition-host.ts';
import {
  ANSWERED,
  ENDED,
  KIND_STEP,
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
  type ToWorker,
} from './partition-protocol.ts';

if (parentPort === null) throw new Error('partition-worker.ts runs as a worker thread');
const { reply, requests, flags, words, slot } = workerData as {
  reply: MessagePort;
  requests: MessagePort;
  flags: Int32Array;
  words: Int32Array;
  slot: number;
};
// The test request `exit`: the thread ends, as one that crashed would.
const host = new PartitionHost(() => process.exit(1));

function answer({ message, transfer }: Answer): void {
  reply.postMessage(message, transfer);
  Atomics.store(flags, slot, ANSWERED);
  Atomics.notify(flags, slot);
}

/** A step's answer: in the reply buffers when its changes fit there, else a message. */
function answerRaw(raw: RawStep): void {
  const shared = writeReply(raw);
  if (shared === null) {
    answer(answerStep(raw));
    return;
  }
  const base = slot * REQ_WIDTH;
  words[base + REP_COUNT] = shared.count;
  words[base + REP_NULLS] = shared.nullMask;
  words[base + REP_FOLDS] = shared.folds;
  words[base + REP_NET] = shared.net;
  // The flag's store publishes the words and the buffers written before it.
  Atomics.store(flags, slot, SHARED_ANSWER);
  Atomics.notify(flags, slot);
}

/** How long one wait lasts before it is renewed (a thread being terminated stops between waits). */
const WAIT_MS = 250;

/** Serves requests until the thread is terminated: one outstanding at a time (the main thread waits). */
function serve(): void {
  const base = slot * REQ_WIDTH;
  let seen = 0;
  for (;;) {
    Atomics.wait(words, base + REQ_SEQ, seen, WAIT_MS);
    const now = Atomics.load(words, base + REQ_SEQ);
    if (now === seen) continue;
    seen = now;
    try {
      if (words[base + REQ_KIND] === KIND_STEP)
        answerRaw(
          host.sharedStep(
            words[base + REQ_H] as number,
            words[base + REQ_BATCH] as number,
            words[base + REQ_COUNT] as number,
            words[base + REQ_NULLS] as number,
          ),
        );
      else {
        const got = receiveMessageOnPort(requests);
        if (got === undefined)
          throw new SluiceError('INTERNAL_ERROR', 'a partition request came without its message');
        const message = got.message as ToWorker;
        if (message.t === 'step') answerRaw(host.step(message));
        else answer(host.handle(message));
      }
    } catch (error) {
      answer({
        message: {
          ok: false,
          code: error instanceof SluiceError ? error.code : 'INTERNAL_ERROR',
          message: error instanceof Error ? error.message : String(error),
        },
        transfer: [],
      });
    }
  }
}

// A thread that ends (process.exit, an error outside a request) says so on its flag, so the main
// thread, blocked waiting for it, fails the call at once instead of at its timeout.
process.on('exit', () => {
  Atomics.store(flags, slot, ENDED);
  Atomics.notify(flags, slot);
});

// After this module's evaluation (the thread's loader finishes first), never to return.
setImmediate(serve);
