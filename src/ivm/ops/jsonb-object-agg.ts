// JSONB_OBJECT_AGG's result from the group's multiset of [key, value] pairs (MultisetColumn in
// aggregates.ts, keyed and ordered as JSONB_AGG's elements). PostgreSQL keeps the last value of a
// duplicate key in input order, which a set of rows does not have: here a key keeps its greatest
// value in jsonb's order (equal values, 1.5 and 1.50, the one whose text sorts last), so the object
// is a function of the group's current rows whatever order they came, left and were restored in.
import type { Value } from '../../common/types.ts';
import { Jsonb, makeObject, type JsonNode } from '../../common/json/jsonb.ts';

/**
 * The object of a group's pairs, `sorted` ascending by compareJsonbElements (key, then value in
 * jsonb's order, then text): walking it, a later pair of the same key replaces an earlier one, so
 * each key ends with its greatest value; makeObject sorts the keys as jsonb stores them.
 */
export function jsonbObjectAgg(sorted: readonly Value[]): Jsonb {
  const pairs: [string, JsonNode][] = [];
  for (const v of sorted) {
    const pair = (v as Jsonb).root as readonly [string, JsonNode];
    pairs.push([pair[0], pair[1]]);
  }
  // makeObject keeps the last of a key's values: the greatest, in this order
  return Jsonb.of(makeObject(pairs));
}
