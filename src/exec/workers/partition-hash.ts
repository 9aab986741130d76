// Which partition owns a group: a hash of the group's id (the Reduce's own group identity,
// `singleKey` of a one-column key, `encodeValues` of several), so values the Reduce treats as one
// group (0 and -0, every NaN) always land in one partition, on the main thread and in every worker.
import type { Value } from '../../common/types.ts';
import { encodeValues, singleKey } from '../../common/values.ts';

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** A 32-bit finalizer (murmur3's): spreads consecutive ids over the partitions. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h);
}

/** The hash of a number's group id (the number itself). */
export function hashNumber(id: number): number {
  // 0 and -0 are one group (a Map's key equality), and so is every NaN.
  if ((id | 0) === id) return mix(id | 0);
  if (id !== id) return mix(0x7ff80000);
  f64[0] = id;
  return mix((u32[0] as number) ^ Math.imul(u32[1] as number, 0x9e3779b1));
}

/** The hash of a group id (what `groupId` returns). */
export function hashGroupId(id: Value): number {
  if (typeof id === 'number') return hashNumber(id);
  if (typeof id === 'string') return hashString(id);
  if (id === null) return 0x5bd1e995;
  if (typeof id === 'boolean') return id ? 0x27d4eb2f : 0x165667b1;
  return hashString(String(id));
}

/** The group id of a key, as ReduceOp computes it. */
export function groupId(key: readonly Value[]): Value {
  return key.length === 1 ? singleKey(key[0] as Value) : encodeValues(key);
}

/** The partition (0 ≤ p < partitions) that owns the group of `id`. */
export function partitionOf(id: Value, partitions: number): number {
  return hashPartition(hashGroupId(id), partitions);
}

/**
 * `hash % partitions` for a 32-bit unsigned hash, in small-integer arithmetic: the hash may exceed the
 * int32 range, and `%` on it is then a floating-point remainder (≈ 4× the cost of the whole hash in
 * the routing loop). Split as hash = hi · 256 + lo, with hi < 2^24: the same value, exactly.
 */
export function hashPartition(hash: number, partitions: number): number {
  return (((hash >>> 8) % partitions) * (256 % partitions) + (hash & 255)) % partitions;
}
