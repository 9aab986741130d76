// Where a Kafka source starts reading each partition: the position its journal recorded, else its
// `start` option (earliest, latest, or given offsets), checked against the partition's log range.
import type { PartitionWatermarks } from './kafka-client.ts';
import type { KafkaStartSpec } from './kafka-source-types.ts';

/** Each partition's first offset to read, or why the source cannot start. */
export type StartPositions =
  | { readonly from: Map<number, number> }
  | { readonly error: string; readonly partition: number; readonly offset: number };

export function startPositions(
  marks: readonly PartitionWatermarks[],
  applied: ReadonlyMap<number, number>,
  start: KafkaStartSpec,
  topic: string,
): StartPositions {
  const from = new Map<number, number>();
  for (const m of marks) {
    const stored = applied.get(m.partition);
    if (stored !== undefined) {
      if (stored < m.low) {
        return {
          error: `offset ${stored} of partition ${m.partition} is no longer in topic "${topic}" (the log starts at ${m.low}): retention deleted records before they were read`,
          partition: m.partition,
          offset: stored,
        };
      }
      from.set(m.partition, stored);
      continue;
    }
    let offset = m.low;
    if (start === 'latest') offset = m.high;
    else if (start !== 'earliest') {
      const given = start.find((s) => s.partition === m.partition);
      if (given !== undefined) {
        if (given.offset < m.low || given.offset > m.high) {
          return {
            error: `start offset ${given.offset} of partition ${m.partition} is outside topic "${topic}" (offsets ${m.low}..${m.high})`,
            partition: m.partition,
            offset: given.offset,
          };
        }
        offset = given.offset;
      }
    }
    from.set(m.partition, offset);
  }
  return { from };
}
