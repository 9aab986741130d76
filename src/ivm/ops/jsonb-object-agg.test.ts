// Unit tests of JSONB_OBJECT_AGG's column: a duplicate key's value does not depend on the order pairs
// came and left in (every permutation of the same pairs gives one object), retraction reveals the
// next value, and the state survives serialize/deserialize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Value } from '../../common/types.ts';
import { T } from '../../common/types.ts';
import { objectAggPair } from '../../common/json/object-agg-pair.ts';
import { parseJsonb } from '../../common/json/jsonb.ts';
import type { AggregateSpec } from '../dataflow-plan.ts';
import { aggregateColumn, type AggColumn } from './aggregates.ts';

function column(): AggColumn {
  const spec: AggregateSpec = {
    fn: 'jsonb_object_agg',
    distinct: false,
    argColumn: 0,
    argType: T.jsonb,
    outputType: T.jsonb,
    strategy: 'multiset',
  };
  return aggregateColumn(
    spec,
    { data: new Float64Array(16), stride: 8 },
    0,
    { data: new Float64Array(16), stride: 8 },
    0,
  );
}

const pair = (k: string, json: string): Value => objectAggPair(k, T.text, parseJsonb(json), T.jsonb);

function step(c: AggColumn, changes: readonly [Value, number][]): string {
  c.resetPartial(0, 0);
  for (const [v, w] of changes) c.accumulate(0, v, w, 0);
  c.merge(0, 0);
  return String(c.result(0, 1));
}

function permutations<X>(xs: readonly X[]): X[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

test('a duplicate key keeps its greatest value whatever order the pairs came in, one batch or many', () => {
  const pairs = [pair('a', '1'), pair('a', '"z"'), pair('a', 'null'), pair('a', '1.50'), pair('bb', '[]')];
  for (const order of permutations(pairs)) {
    const batched = column();
    assert.equal(
      step(
        batched,
        order.map((p) => [p, 1]),
      ),
      '{"a": 1.50, "bb": []}',
    );
    const one = column();
    let out = '';
    for (const p of order) out = step(one, [[p, 1]]);
    assert.equal(out, '{"a": 1.50, "bb": []}');
  }
});

test('retracting the chosen value shows the next one; the state survives serialize/deserialize', () => {
  const c = column();
  step(c, [
    [pair('a', '2'), 1],
    [pair('a', '1'), 2],
    [pair('b', 'true'), 1],
  ]);
  assert.equal(step(c, [[pair('a', '2'), -1]]), '{"a": 1, "b": true}');
  const restored = column();
  restored.deserialize(0, c.serialize(0));
  assert.equal(String(restored.result(0, 3)), '{"a": 1, "b": true}');
  // one of the two rows holding 1 leaves: still there; the other: the key goes
  assert.equal(step(restored, [[pair('a', '1'), -1]]), '{"a": 1, "b": true}');
  assert.equal(step(restored, [[pair('a', '1'), -1]]), '{"b": true}');
  assert.equal(step(restored, [[pair('b', 'true'), -1]]), 'null');
});
