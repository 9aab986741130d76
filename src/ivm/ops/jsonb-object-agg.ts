// JSONB_OBJECT_AGG's result from the group's multiset of [key, value] pairs (MultisetColumn in
// aggregates.ts, keyed and ordered as JSONB_AGG's elements). PostgreSQL keeps the last value of a
// duplicate key in input order, which a set of rows does not have: here a key keeps its greatest
// value in jsonb's order, and of equal values (1.5 and 1.50) the one whose text sorts last, so the
// object is a function of the group's current rows whatever order they came, left and were
// restored in.
import type { Value } from '../../common/types.ts';
import { Jsonb, compareJsonb, makeObject, type JsonNode } from '../../common/json/jsonb.ts';

/** Whether `b` replaces `a` as a duplicate key's value: greater in jsonb's order, or equal with a later text. */
export function laterValue(a: JsonNode, b: JsonNode): boolean {
  const x = Jsonb.of(a);
  const y = Jsonb.of(b);
  const c = compareJsonb(x, y);
  return c < 0 || (c === 0 && x.text < y.text);
}

/** The object of a group's pairs (each [key text, value]); keys sorted as jsonb stores them. */
export function jsonbObjectAgg(pairs: readonly Value[]): Jsonb {
  const chosen = new Map<string, JsonNode>();
  for (const v of pairs) {
    const [key, value] = (v as Jsonb).root as readonly [string, JsonNode];
    const held = chosen.get(key);
    // a JsonNode is never undefined: undefined is a key not met yet
    if (held === undefined || laterValue(held, value)) chosen.set(key, value);
  }
  return Jsonb.of(makeObject([...chosen]));
}
