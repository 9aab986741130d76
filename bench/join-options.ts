// bench/join.ts's command line: the implementations, variants, phases and sizes of a run.
import { forEachFlag, intArg as int, listArg as list } from './bench-args.ts';
import { type PhaseName, type Variant } from './join-workload.ts';

export type Impl = 'sluice' | 'db-ivm' | 'map';
export const IMPLS: readonly Impl[] = ['sluice', 'db-ivm', 'map'];
export const VARIANTS: readonly Variant[] = ['agg', 'join', 'left', 'semi'];
export const PHASES: readonly PhaseName[] = ['auctions', 'bids', 'mutations'];

/** Batches of the untimed prefix of a phase (batch 1 times only the last `slice` changes of each). */
export const PREFIX_BATCH = 10_000;

export interface Options {
  impls: Impl[];
  variants: Variant[];
  batches: number[];
  auctions: number;
  bids: number;
  mutate: number;
  categories: number;
  /** Timed changes per phase at batch 1 (the rest of the phase is applied untimed first). */
  slice: number;
  repeat: number;
  seed: number;
  /**
   * Warm-up instances run (and dropped) before the timed one. The timed instance is then the
   * process's (warmups + 1)-th: with one, V8 meets a second engine in the timed run and throws away
   * code it had specialised to the first (its closures, its objects' shapes), so the first phase
   * also times that re-optimisation (bench/README.md).
   */
  warmups: number;
  /** Print each timed phase's window on the monotonic clock (a `node --cpu-prof` profile's), to stderr. */
  phaseWindows: boolean;
  /** Wait for the collector's helper threads after the forced collection before each timed phase. */
  settle: boolean;
  quick: boolean;
  cpuProfile: string | null;
  child: boolean;
}

export function parseArgs(argv: string[]): Options {
  const o: Options = {
    impls: [...IMPLS],
    variants: [...VARIANTS],
    batches: [1, 100, 10_000],
    auctions: 100_000,
    bids: 1_000_000,
    mutate: 0.1,
    categories: 100,
    slice: 20_000,
    repeat: 3,
    seed: 20111111,
    warmups: 1,
    phaseWindows: false,
    settle: true,
    quick: false,
    cpuProfile: null,
    child: false,
  };
  const set = new Set<string>();
  forEachFlag(argv, (flag, value, inline, a) => {
    set.add(flag);
    switch (flag) {
      case '--quick':
        o.quick = inline === undefined || inline === '1' || inline === 'true';
        break;
      case '--child':
        o.child = true;
        break;
      case '--peers':
        o.impls = ['db-ivm', 'map'];
        break;
      case '--impl': {
        const v = value();
        o.impls = v === 'all' ? [...IMPLS] : (list(v) as Impl[]);
        for (const x of o.impls) if (!IMPLS.includes(x)) throw new Error(`bench: unknown impl ${x}`);
        break;
      }
      case '--variant': {
        const v = value();
        o.variants = v === 'all' ? [...VARIANTS] : (list(v) as Variant[]);
        for (const x of o.variants) if (!VARIANTS.includes(x)) throw new Error(`bench: unknown variant ${x}`);
        break;
      }
      case '--batch':
        o.batches = list(value()).map((v) => int('--batch', v));
        if (o.batches.some((b) => b === 0)) throw new Error('bench: --batch must be ≥ 1');
        break;
      case '--auctions':
        o.auctions = int(flag, value());
        break;
      case '--bids':
        o.bids = int(flag, value());
        break;
      case '--mutate':
        o.mutate = Number(value());
        if (!(o.mutate >= 0 && o.mutate <= 1)) throw new Error('bench: --mutate is a fraction in [0, 1]');
        break;
      case '--categories':
        o.categories = Math.max(1, int(flag, value()));
        break;
      case '--slice':
        o.slice = Math.max(1, int(flag, value()));
        break;
      case '--repeat':
        o.repeat = Math.max(1, int(flag, value()));
        break;
      case '--seed':
        o.seed = int(flag, value());
        break;
      case '--no-warmup':
        o.warmups = 0;
        break;
      case '--warmups':
        o.warmups = int(flag, value());
        break;
      case '--phase-windows':
        o.phaseWindows = true;
        break;
      case '--no-settle':
        o.settle = false;
        break;
      case '--cpu-profile':
        o.cpuProfile = value();
        break;
      case '--help':
      case '-h':
        console.log(
          'usage: node --import tsx bench/join.ts [--quick] [--peers | --impl sluice,db-ivm,map] [--variant agg,join,left,semi]\n' +
            '       [--batch 1,100,10000] [--auctions N] [--bids N] [--mutate F] [--categories N] [--slice N]\n' +
            '       [--repeat N] [--seed N] [--warmups N | --no-warmup] [--no-settle] [--cpu-profile PREFIX]\n' +
            '       [--phase-windows]\n' +
            '  every flag also as an environment variable: BENCH_QUICK=1, BENCH_IMPL=..., BENCH_NO_WARMUP=1, ...',
        );
        process.exit(0);
        break;
      default:
        throw new Error(`bench: unknown flag ${a}`);
    }
  });
  if (o.quick) {
    if (!set.has('--auctions')) o.auctions = Math.ceil(o.auctions / 40);
    if (!set.has('--bids')) o.bids = Math.ceil(o.bids / 40);
    if (!set.has('--slice')) o.slice = Math.ceil(o.slice / 40);
    if (!set.has('--repeat')) o.repeat = 1;
  }
  return o;
}

/** The join bench's flags that take no value, as BENCH_* variables too (see bench-args.ts). */
export const SWITCHES: readonly string[] = [
  '--quick',
  '--peers',
  '--no-warmup',
  '--no-settle',
  '--phase-windows',
];
