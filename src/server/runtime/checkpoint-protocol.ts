// The messages between the main thread's checkpoint writer (checkpoint-writer.ts) and the writer
// thread (checkpoint-worker.ts), and the slots of the flags they share.
import type { CheckpointHeader, CheckpointTransactionStats } from '../../storage/checkpoint-transaction.ts';
import type { TableBlock } from '../../storage/table-blocks.ts';

/** Slots of a file's shared flags. */
export const BUSY = 0;
export const ABORTED_WRITE = 1;
/** Set by the thread once it has closed its connection to the file (after `release`). */
export const RELEASED = 2;
/** Bytes of a file's shared flags. */
export const FLAG_BYTES = 12;

export type ToWorker =
  | { readonly t: 'open'; readonly file: number; readonly path: string; readonly flags: SharedArrayBuffer }
  | { readonly t: 'begin'; readonly file: number; readonly write: number; readonly header: CheckpointHeader }
  | {
      readonly t: 'batch';
      readonly file: number;
      readonly write: number;
      readonly stateId: string;
      /** Set on the first batch of a state: its delta replaces what was stored. */
      readonly replaceAll: boolean | null;
      readonly removes: readonly string[];
      readonly keys: readonly string[];
      readonly texts: readonly string[];
    }
  | {
      /** Column blocks of a table written whole (table-blocks.ts); their buffers are transferred. */
      readonly t: 'blocks';
      readonly file: number;
      readonly write: number;
      readonly stateId: string;
      readonly replaceAll: boolean | null;
      readonly blocks: readonly TableBlock[];
    }
  | {
      readonly t: 'commit';
      readonly file: number;
      readonly write: number;
      /**
       * After the COMMIT, make the file durable (a WAL checkpoint with its fsyncs) so journal
       * retention may delete what this checkpoint covers; otherwise only when the WAL outgrew its bound.
       */
      readonly durable: boolean;
    }
  | { readonly t: 'abort'; readonly file: number; readonly write: number }
  | { readonly t: 'release'; readonly file: number }
  /** Test hook (`failWriterThreadForTests`): the thread exits at once, as if it had crashed. */
  | { readonly t: 'exit-for-test' }
  /** Test hook: the thread answers with its connection's pragmas (`settings`). */
  | { readonly t: 'settings'; readonly file: number };

/** The writer connection's durability settings, read back from it (tests). */
export interface WriterSettings {
  /** PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL. */
  readonly synchronous: number;
  /** PRAGMA wal_autocheckpoint: 0 when only the thread's own durable points copy the WAL. */
  readonly walAutocheckpoint: number;
  readonly journalMode: string;
}

export interface WireError {
  readonly code: string;
  readonly message: string;
  readonly detail?: string;
  readonly hint?: string;
}

export type FromWorker =
  | { readonly t: 'ack'; readonly file: number; readonly write: number }
  | {
      readonly t: 'done';
      readonly file: number;
      readonly write: number;
      readonly stats: CheckpointTransactionStats;
      /**
       * The write survives a power loss: a WAL checkpoint after its COMMIT synced the WAL, copied it
       * into the file and synced the file. Otherwise it survives a process kill only.
       */
      readonly durable: boolean;
    }
  | { readonly t: 'settings'; readonly file: number; readonly settings: WriterSettings }
  | { readonly t: 'failed'; readonly file: number; readonly write: number; readonly error: WireError };
