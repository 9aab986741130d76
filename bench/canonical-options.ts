// The canonical benchmark's command line: its flags, defaults, targets and how many events each
// batch size times and preloads (bench/canonical.ts, parent and child alike).
import { forEachFlag, intArg as int, listArg as list } from './bench-args.ts';
import type { DbIvmVariant } from './dbivm.ts';
import type { Dist } from './workload.ts';

export type Impl = 'sluice' | 'db-ivm' | 'map';
const IMPLS: readonly Impl[] = ['sluice', 'db-ivm', 'map'];

export const TARGET_EVENTS_PER_S = 3_000_000; // Sluice, one core, batch 10,000 (issue: memory speed on every core)
export const TARGET_RATIO = 15; // Sluice / db-ivm events/s, every batch size
export const TARGET_WORKER_SPEEDUP = 1.7; // Sluice with 2 workers / with 1, events/s

/**
 * Every run processes the same TOTAL_EVENTS rows: an untimed preload (in batches of PRELOAD_BATCH)
 * followed by the timed events at the batch size under test. All batch sizes therefore end in the
 * same state (same groups, same histogram) and their figures compare like with like. Batch 1 times
 * only the last 200,000 events, on a fully populated state, after the 50,000 before them settle it.
 */
const TOTAL_EVENTS = 1_000_000;
export const PRELOAD_BATCH = 10_000;
const DEFAULT_TIMED: Record<number, number> = { 1: 200_000, 100: TOTAL_EVENTS, 10_000: TOTAL_EVENTS };

export interface Options {
  impls: Impl[];
  dists: Dist[];
  batches: number[];
  events: number | null;
  preload: number | null;
  quick: boolean;
  sellers: number;
  seed: number;
  zipfS: number;
  warmup: number | null;
  settle: number | null;
  /** Wait for the forced collection's sweep before the clock starts (gc-settle.ts); off: --no-sweep-wait. */
  sweepWait: boolean;
  variant: DbIvmVariant;
  repeat: number;
  cpuProfile: string | null;
  child: boolean;
  /** Sluice's `workers` setting, each run in turn (db-ivm and the plain Map run once, with 1). */
  workers: number[];
}

export function parseArgs(argv: string[]): Options {
  const o: Options = {
    impls: [...IMPLS],
    dists: ['uniform', 'zipf'],
    batches: [1, 100, 10_000],
    events: null,
    preload: null,
    quick: false,
    sellers: 100_000,
    seed: 20111111,
    zipfS: 1.1,
    warmup: null,
    settle: null,
    sweepWait: true,
    variant: 'reduce',
    repeat: 1,
    cpuProfile: null,
    child: false,
    workers: [1, 2],
  };
  forEachFlag(argv, (flag, value, _inline, a) => {
    switch (flag) {
      case '--quick':
        o.quick = true;
        break;
      case '--child':
        o.child = true;
        break;
      case '--impl': {
        const v = value();
        o.impls = v === 'both' ? ['sluice', 'db-ivm'] : v === 'all' ? [...IMPLS] : (list(v) as Impl[]);
        for (const x of o.impls) if (!IMPLS.includes(x)) throw new Error(`bench: unknown impl ${x}`);
        break;
      }
      case '--dist': {
        const v = value();
        o.dists = v === 'both' || v === 'all' ? ['uniform', 'zipf'] : (list(v) as Dist[]);
        for (const x of o.dists)
          if (x !== 'uniform' && x !== 'zipf') throw new Error(`bench: unknown dist ${x}`);
        break;
      }
      case '--batch':
        o.batches = list(value()).map((v) => int('--batch', v));
        if (o.batches.some((b) => b === 0)) throw new Error('bench: --batch must be ≥ 1');
        break;
      case '--events':
        o.events = int('--events', value());
        break;
      case '--preload':
        o.preload = int('--preload', value());
        break;
      case '--sellers':
        o.sellers = int('--sellers', value());
        break;
      case '--seed':
        o.seed = int('--seed', value());
        break;
      case '--zipf-s':
        o.zipfS = Number(value());
        break;
      case '--repeat':
        o.repeat = Math.max(1, int('--repeat', value()));
        break;
      case '--workers':
        o.workers = list(value()).map((v) => int('--workers', v));
        if (o.workers.some((w) => w < 1)) throw new Error('bench: --workers must be ≥ 1');
        break;
      case '--cpu-profile':
        o.cpuProfile = value();
        break;
      case '--warmup':
        o.warmup = int('--warmup', value());
        break;
      case '--settle':
        o.settle = int('--settle', value());
        break;
      case '--no-sweep-wait':
        o.sweepWait = false;
        break;
      case '--dbivm-variant': {
        const v = value();
        if (v !== 'reduce' && v !== 'groupby') throw new Error(`bench: unknown db-ivm variant ${v}`);
        o.variant = v;
        break;
      }
      case '--help':
      case '-h':
        console.log(
          'usage: npm run bench -- [--quick] [--events N] [--preload N] [--impl sluice|db-ivm|map|both|all] [--dist uniform|zipf|both]\n' +
            '       [--batch 1,100,10000] [--sellers N] [--seed N] [--zipf-s S] [--warmup N] [--settle N] [--no-sweep-wait] [--repeat N] [--cpu-profile PREFIX]\n' +
            '       [--dbivm-variant reduce|groupby] [--workers 1,2]',
        );
        process.exit(0);
        break;
      default:
        throw new Error(`bench: unknown flag ${a}`);
    }
  });
  return o;
}

/** Timed events for a batch size. */
export function eventsFor(o: Options, batch: number): number {
  let n = o.events ?? DEFAULT_TIMED[batch] ?? Math.max(batch * 100, TOTAL_EVENTS);
  if (o.quick && o.events === null) n = Math.ceil(n / 10);
  return Math.max(n, batch);
}

/** Untimed events applied before the timed ones. */
export function preloadFor(o: Options, batch: number): number {
  if (o.preload !== null) return o.preload;
  if (o.events !== null) return 0;
  return Math.max(0, (o.quick ? TOTAL_EVENTS / 10 : TOTAL_EVENTS) - eventsFor(o, batch));
}

/** Rows of the preload that can settle a run at a smaller batch size (below). */
const DEFAULT_SETTLE = 50_000;

/**
 * How many of the preload's last events are applied at the timed batch size, untimed, on the
 * measured instance: a batch size's own code paths (and, in Sluice, the kernels generated per
 * engine) are compiled on the instance that is timed, so a run does not time their first
 * thousands of calls after a preload in batches of 10,000. The throwaway warm-up instance cannot do
 * this for code generated per instance.
 */
export function settleFor(o: Options, batch: number): number {
  const preload = preloadFor(o, batch);
  if (o.settle !== null) return Math.min(o.settle, preload);
  return batch < PRELOAD_BATCH ? Math.min(DEFAULT_SETTLE, preload) : 0;
}
