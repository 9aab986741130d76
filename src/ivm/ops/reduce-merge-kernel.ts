// A Reduce's generated merge: for a Reduce with one key whose aggregates are all COUNT, COUNT(*) and
// integer SUM (an integer AVG is numeric, decimal-sum.ts: interpreted), the fold of each touched
// group's partial into its record, its new values, their comparison with the values the record
// mirrors and the group's change, written out as one function for this Reduce (no calls through
// shared aggregate objects, no checkInt, no scratch-row compare).
// It takes only the common case — the emitted values held in the record and the key in the record
// (a number) or in the Reduce's key array (a text: such a Reduce keeps no key texts, or it would not
// be generated), no bigint sum, a safe-integer result, every value non-null, no row error kept — and
// hands any other group, before it has written anything, to the interpreted merge (`slow`). A group
// left with no rows is released here too (its -old from the record, then the Reduce's `release`).
// Only positions and numbers are written into the code; the maps and the change buffer are parameters.
// Beside it, the one-row step (`one`): a step of one input row, its key and arguments (the row pass's
// expressions, reduce-kernel.ts) folded straight into its group's record with no partials, when the
// row is the common case and its group exists; else it returns before any write, and the general
// passes take the step. And the two-row step (`two`), the same for two rows in two groups: the
// -old/+new a Reduce over a Reduce is handed at each epoch of one event (the canonical histogram's).
import { SluiceError } from '../../common/errors.ts';
import type { Value } from '../../common/types.ts';
import { inlinePartial, type AggColumn, type GroupRecords, type InlinePartial } from './aggregates.ts';
import type { ChangeBuffer } from './reduce-changes.ts';
import {
  F_FLAGS,
  F_KEY,
  F_OUT,
  HAS_OUT,
  KEY_IN_RECORD,
  OUT_IN_RECORD,
  SIGNED_ZERO,
} from './reduce-record.ts';
import { generatedFunction } from '../../common/generated-function.ts';
import type { ZBatch } from '../zset.ts';
import { NO_SLOT, type GroupIndex } from '../group-index.ts';
import type { RowCode } from './reduce-kernel.ts';

/** Merges the step's touched groups; returns the sum of its read-ahead (kept so it is not dead code). */
export type MergeFn = (
  touched: readonly number[],
  nTouched: number,
  data: Float64Array,
  pd: Float64Array,
  scratch: Value[],
  errorsBySlot: ReadonlyMap<number, unknown>,
  track: ((slot: number) => void) | null,
  slow: (t: number) => void,
) => number;

export interface MergeKernelSpec {
  readonly keyCount: number;
  readonly columns: readonly AggColumn[];
  readonly records: GroupRecords;
  /** The Reduce's key array by slot (the key of a group whose record does not hold it). */
  readonly keys: readonly (readonly Value[] | undefined)[];
  readonly pstride: number;
  readonly changes: ChangeBuffer;
  /** Groups whose records are read ahead at a time (a power of two). */
  readonly ahead: number;
  /**
   * Releases a group whose row count reached zero (its key out of the index, its slot freed), after
   * the merge has written the group's -old: the Reduce's own release.
   */
  readonly release: (slot: number) => void;
  /**
   * The fused Map stage's row code and the group index, for the one- and two-row steps (`one`,
   * `two`); null: none (a text key keeps the general passes). `zeroSign`: the key is a float, whose
   * zero group counts its -0 rows (zero-sign.ts): a -0 key is left to the general passes.
   */
  readonly oneRow?: { readonly code: RowCode; readonly index: GroupIndex; readonly zeroSign: boolean } | null;
}

/**
 * A one-row step whole (its row's key and arguments, its group's fold and change), or a two-row
 * step's (each row's, in two groups): true when done; false when a row is not the common case (filtered out, an error, a new or emptied group, a NULL
 * or bigint result, a map of the rare cases holding something), before anything is written: the
 * step then takes the general passes, which evaluate the row again (views are deterministic).
 */
export type OneRowFn = (
  input: ZBatch,
  data: Float64Array,
  scratch: Value[],
  errorsBySlot: ReadonlyMap<number, unknown>,
  track: ((slot: number) => void) | null,
) => boolean;

export interface MergeKernel {
  readonly fn: MergeFn;
  /** The one-row step (null: no row code given, or a key that is not a plain value). */
  readonly one: OneRowFn | null;
  /** The two-row step, of two rows in two existing groups (null when `one` is). */
  readonly two: OneRowFn | null;
  /** The generated code (for tests and debugging). */
  readonly source: string;
}

/** The generated merge for this Reduce, or null when its key or aggregates are not the common case. */
export function mergeKernel(spec: MergeKernelSpec): MergeKernel | null {
  if (spec.keyCount !== 1 || spec.columns.length === 0) return null;
  const inline: InlinePartial[] = [];
  for (const c of spec.columns) {
    const p = inlinePartial(c);
    if (p === null) return null;
    if (p.sums ? p.fn !== 'sum' : p.fn !== 'count' && p.fn !== 'count_star') return null;
    if (c.spec.argType !== null && c.spec.argType?.kind !== 'int') return null;
    inline.push(p);
  }
  const stride = spec.records.stride;
  const params: string[] = ['records', 'changes', 'keys', 'release'];
  const args: unknown[] = [spec.records, spec.changes, spec.keys, spec.release];
  const bind = (value: unknown): string => {
    params.push(`q${params.length}`);
    args.push(value);
    return params[params.length - 1] as string;
  };
  // Conditions for the common case, checked before anything is written.
  // Per group, so one group's bigint sum or error leaves the others on the generated path. The maps
  // are probed only while one of them holds something (`rare`, read once a step and again after each
  // group handed to `slow`, the only code in the loop that adds to them: `release` only deletes), not
  // their sizes loaded for every group. (A group whose sum is a bigint has a bigint in its row, not
  // held in the record, or an error: the guards overlap, on purpose.)
  const maps: string[] = ['errorsBySlot'];
  const probes: string[] = ['errorsBySlot.has(slot)'];
  for (const p of inline) {
    if (!p.sums) continue;
    const bigs = bind(p.bigs);
    const partialBigs = bind(p.partialBigs);
    maps.push(bigs, partialBigs);
    probes.push(`${bigs}.has(slot)`, `${partialBigs}.has(t)`);
  }
  const anyHeld = maps.map((m) => `${m}.size !== 0`).join(' || ');
  // A float zero group (its shown sign may change: zero-sign.ts) is the interpreted merge's too.
  const guard = `(flags & ${HAS_OUT | OUT_IN_RECORD}) === ${HAS_OUT} || flags >= ${SIGNED_ZERO} || (rare && (${probes.join(' || ')}))`;
  const toSlow = `{ slow(t); rare = ${anyHeld}; continue; }`;
  const { fold, commit, result } = groupFold(inline, (a, field) => `pd[pat + ${a.pbase + field}]`, toSlow);
  const nAggs = inline.length;
  const rowChange = groupChange(nAggs, 'continue;');
  const dropHead = [
    '    if (count === 0) {',
    '      if (track !== null) track(slot);',
    `      const key = (flags & ${KEY_IN_RECORD}) !== 0 ? null : keys[slot];`,
  ];
  const dropTail = ['      data[at] = 0;', '      release(slot);', '      continue;', '    }'];
  const dropPair = [
    ...dropHead,
    `      if ((flags & ${HAS_OUT}) !== 0)`,
    `        changes.put2(-1, key === null ? data[at + ${F_KEY}] : key[0], data[at + ${F_OUT}]);`,
    ...dropTail,
  ];
  const dropRow = [
    ...dropHead,
    `      if ((flags & ${HAS_OUT}) !== 0) changes.retract(records, slot, key, flags, 1);`,
    ...dropTail,
  ];
  const source = [
    'return function generatedReduceMerge(touched, nTouched, data, pd, scratch, errorsBySlot, track, slow) {',
    '  let sink = 0;',
    `  let rare = ${anyHeld};`,
    '  for (let t = 0; t < nTouched; t++) {',
    `    if ((t & ${spec.ahead - 1}) === 0) {`,
    // the next records' cache misses overlap, as in the interpreted merge
    `      const end = Math.min(nTouched, t + ${spec.ahead});`,
    '      for (let u = t; u < end; u++) {',
    `        const x = touched[u] * ${stride};`,
    `        sink += data[x] + data[x + ${stride - 1}];`,
    '      }',
    '    }',
    '    const slot = touched[t];',
    `    const at = slot * ${stride};`,
    `    const flags = data[at + ${F_FLAGS}];`,
    `    if (${guard}) ${toSlow}`,
    `    const pat = t * ${spec.pstride};`,
    '    const count = data[at] + pd[pat];',
    // No rows left: the group goes, here rather than in the interpreted merge (a sparse bucket id
    // left by its one member and another opened, under a skewed view over a view, every epoch).
    // Its record holds its emitted values (the guard), so its -old is read from there; the fields
    // the fold would write are cleared when the slot is next allocated.
    ...(nAggs === 1 ? dropPair : dropRow),
    // a negative count (an internal error): the interpreted merge throws
    `    if (!(count > 0)) ${toSlow}`,
    ...fold.map((l) => `    ${l}`),
    ...result.map((l) => `    ${l}`),
    '    if (track !== null) track(slot);',
    '    data[at] = count;',
    ...commit.map((l) => `    ${l}`),
    ...rowChange,
    '  }',
    '  return sink;',
    '};',
  ].join('\n');
  const factory = generatedFunction(...params, source) as (...a: unknown[]) => MergeFn;
  const fn = factory(...args);
  const oneRow = spec.oneRow ?? null;
  if (oneRow === null) return { fn, one: null, two: null, source };
  const stepOf = (rows: 1 | 2): { fn: OneRowFn; source: string } => {
    const step = rowStepSource(oneRow.code, inline, stride, anyHeld, rows, oneRow.zeroSign);
    const factory = generatedFunction(...params, ...step.params, 'index', 'NO_SLOT', step.source) as (
      ...a: unknown[]
    ) => OneRowFn;
    return { fn: factory(...args, ...step.values, oneRow.index, NO_SLOT), source: step.source };
  };
  const one = stepOf(1);
  const two = stepOf(2);
  return { fn, one: one.fn, two: two.fn, source: `${source}\n${one.source}\n${two.source}` };
}

/**
 * The one-row step's code (`rows` 1), or the two-row step's (`rows` 2: a Reduce over a Reduce is
 * handed the -old/+new of one upstream group each epoch of one event, most often two groups of its
 * own): each row's columns, its filter, key and arguments (the row pass's expressions), then the
 * fold of the row itself into its group's record (no partials) and the group's change, as the merge
 * writes them. Every condition the row pass, the accumulate and the merge would send elsewhere
 * returns false before the first write: with two rows, both groups are checked before either is
 * written, and two rows of one group (their fold is one change, not two) are the general passes'.
 * With `zeroSign` (a float key) a -0 key is theirs too: only they count the zero group's -0 rows.
 */
function rowStepSource(
  code: RowCode,
  inline: readonly InlinePartial[],
  stride: number,
  anyHeld: string,
  rows: 1 | 2,
  zeroSign: boolean,
): { source: string; params: readonly string[]; values: readonly unknown[] } {
  const groups = [...Array(rows).keys()];
  const argOf = (a: number, g: number): string => `a${a}_${g}`;
  const present = (a: number, g: number): string => `${argOf(a, g)} !== null`;
  const hasArg = code.args.map((e) => e !== null);
  // As the passes' accumulate: an aggregate with no argument adds nothing to its partial (COUNT(*)'s
  // value is the group's row count; its own field is never counted), one with an argument its weight
  // (and its value times the weight) when the value is not NULL.
  const partialOf =
    (g: number) =>
    (p: InlinePartial, field: number): string | null => {
      const a = inline.indexOf(p);
      if (p.fn === 'count_star') return null;
      if (!hasArg[a]) return '0';
      return field === 0 ? `(${present(a, g)} ? w : 0)` : `(${present(a, g)} ? ${argOf(a, g)} * w : 0)`;
    };
  const bail = 'return false;';
  // The write pass repeats the check pass's fold on the same record, so its bail cannot be taken:
  // were it, one group would be written and the general passes would fold the rows again.
  const cannot = 'throw unreachable();';
  // The accumulate's own test: a number whose product with the weight is a safe integer (else a
  // bigint or an overflow, the aggregate's interpreted partial).
  const sumArgs = (g: number): string[] =>
    inline.flatMap((p, a) =>
      p.sums && hasArg[a]
        ? [
            `if (${present(a, g)} && !(typeof ${argOf(a, g)} === 'number' && Number.isSafeInteger(${argOf(a, g)} * w))) ${bail}`,
          ]
        : [],
    );
  const evaluate = (g: number): string[] => [
    '  if (inCols !== undefined) {',
    ...code.cols.map((c) => `    v${c} = inCols[${c}][${g}];`),
    '  } else {',
    `    const r = input.rows[${g}];`,
    ...code.cols.map((c) => `    v${c} = r[${c}];`),
    '  }',
    '  try {',
    ...(code.filter === null ? [] : [`    if ((${code.filter}) !== true) ${bail}`]),
    `    id${g} = ${code.keys[0] ?? 'null'};`,
    ...code.args.flatMap((e, a) => (e === null ? [] : [`    ${argOf(a, g)} = ${e};`])),
    '  } catch (error) {',
    `    ${bail}`,
    '  }',
    `  if (typeof id${g} !== 'number'${zeroSign ? ` || Object.is(id${g}, -0)` : ''}) ${bail}`,
  ];
  const opening = (g: number): string[] => [
    `    const slot = slot${g};`,
    `    const w = input.weights[${g}];`,
    `    const at = slot * ${stride};`,
    `    const flags = data[at + ${F_FLAGS}];`,
    '    const count = data[at] + w;',
  ];
  const check = (g: number): string[] => {
    const { fold } = groupFold(inline, partialOf(g), bail);
    return [
      '  {',
      ...opening(g),
      `    if ((flags & ${HAS_OUT | OUT_IN_RECORD}) === ${HAS_OUT} || flags >= ${SIGNED_ZERO}) ${bail}`,
      ...sumArgs(g).map((l) => `    ${l}`),
      // an emptied group is released by the merge, a negative count thrown by the interpreted one
      `    if (!(count > 0)) ${bail}`,
      ...fold.map((l) => `    ${l}`),
      '  }',
    ];
  };
  const write = (g: number): string[] => {
    const { fold, commit, result } = groupFold(inline, partialOf(g), cannot);
    const change = groupChange(inline.length, rows === 1 ? 'return true;' : `break group${g};`);
    return [
      `  group${g}: {`,
      ...opening(g),
      ...fold.map((l) => `    ${l}`),
      ...result.map((l) => `    ${l}`),
      '    if (track !== null) track(slot);',
      '    data[at] = count;',
      ...commit.map((l) => `    ${l}`),
      ...change.map((l) => `  ${l}`),
      '  }',
    ];
  };
  const argNames = groups.flatMap((g) => code.args.flatMap((e, a) => (e === null ? [] : [argOf(a, g)])));
  const source = [
    `return function ${rows === 1 ? 'generatedReduceOne' : 'generatedReduceTwo'}(input, data, scratch, errorsBySlot, track) {`,
    // the ids first: with no locals and no arguments (a constant key, COUNT(*) alone) the list is theirs only
    `  let ${[...groups.map((g) => `id${g}`), ...code.locals, ...argNames].join(', ')};`,
    '  const inCols = input.cols;',
    ...groups.flatMap(evaluate),
    `  if (${anyHeld}) ${bail}`,
    ...groups.flatMap((g) => [
      `  const slot${g} = index.get(id${g});`,
      `  if (slot${g} === NO_SLOT) ${bail}`,
    ]),
    ...(rows === 2 ? [`  if (slot0 === slot1) ${bail}`] : []),
    ...groups.flatMap(check),
    ...groups.flatMap(write),
    '  return true;',
    '};',
  ].join('\n');
  return { source, params: [...code.params, 'unreachable'], values: [...code.values, failedAfterChecks] };
}

/** What the write pass of a row step throws, were a check it repeats to fail there (see rowStepSource). */
function failedAfterChecks(): SluiceError {
  return new SluiceError('INTERNAL_ERROR', 'a Reduce row step failed a check after its checks passed');
}

/**
 * The fold of a group's partial into its record, for each aggregate: `fold` (read and check),
 * `commit` (the record's new counts and sums) and `result` (each aggregate's value `r<a>`). `partial`
 * is the code of an aggregate's partial field (0: its count, 1: its sum), null for a COUNT(*) whose
 * partial is known to add nothing (its field is then neither read nor written: the record, and so a
 * checkpoint, stays what the passes leave); `bail` leaves the group to the interpreted path before
 * anything is written (a NULL or bigint result).
 */
export function groupFold(
  inline: readonly InlinePartial[],
  partial: (p: InlinePartial, field: number) => string | null,
  bail: string,
): { fold: string[]; commit: string[]; result: string[] } {
  const fold: string[] = [];
  const commit: string[] = [];
  const result: string[] = [];
  inline.forEach((p, a) => {
    const added = partial(p, 0);
    if (added === null) {
      if (p.fn !== 'count_star')
        throw new SluiceError('INTERNAL_ERROR', `the generated fold skips ${p.fn}, which has a field to add`);
      result.push(`const r${a} = count;`);
      return;
    }
    fold.push(`const n${a} = data[at + ${p.base}] + ${added};`);
    commit.push(`data[at + ${p.base}] = n${a};`);
    if (!p.sums) {
      result.push(`const r${a} = ${p.fn === 'count_star' ? 'count' : `n${a}`};`);
      return;
    }
    fold.push(
      `const s${a} = data[at + ${p.base + 1}] + ${partial(p, 1)};`,
      // n = 0: the result is NULL (not held in the record); beyond 2^53: a bigint (checkInt's rules)
      `if (n${a} === 0 || !Number.isSafeInteger(s${a})) ${bail}`,
    );
    commit.push(`data[at + ${p.base + 1}] = s${a};`);
    result.push(`const r${a} = s${a};`);
  });
  return { fold, commit, result };
}

/**
 * A merged group's change and its record's new emitted values, after its fold: -old (from the
 * record) and +new, `unchanged` when the new values are the old ones. With one aggregate, both in
 * one call of two values each.
 */
export function groupChange(nAggs: number, unchanged: string): string[] {
  const aggs = [...Array(nAggs).keys()];
  // identical, not equal (sameAsRecord): a value of -0 after 0 is a change
  const same = aggs.map((a) => `Object.is(data[at + ${F_OUT + a}], r${a})`).join(' && ');
  const rowChange = [
    `    if ((flags & ${HAS_OUT}) !== 0) {`,
    `      if (${same}) ${unchanged}`,
    '      changes.retract(records, slot, key, flags, 1);',
    '    }',
    `    scratch[0] = key === null ? data[at + ${F_KEY}] : key[0];`,
    ...aggs.map((a) => `    scratch[${1 + a}] = r${a};`),
    '    changes.insert(scratch);',
  ];
  const pairChange = [
    `    const k0 = key === null ? data[at + ${F_KEY}] : key[0];`,
    `    if ((flags & ${HAS_OUT}) !== 0) {`,
    `      const o0 = data[at + ${F_OUT}];`,
    `      if (Object.is(o0, r0)) ${unchanged}`,
    '      changes.replace2(k0, o0, r0);',
    '    } else changes.put2(1, k0, r0);',
  ];
  return [
    // the key array only for a group whose record does not hold its key (a miss avoided otherwise)
    `    const key = (flags & ${KEY_IN_RECORD}) !== 0 ? null : keys[slot];`,
    ...(nAggs === 1 ? pairChange : rowChange),
    ...aggs.map((a) => `    data[at + ${F_OUT + a}] = r${a};`),
    `    data[at + ${F_FLAGS}] = (flags & ${KEY_IN_RECORD}) | ${OUT_IN_RECORD | HAS_OUT};`,
  ];
}
