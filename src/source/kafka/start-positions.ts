// Where a Kafka source starts reading each partition: the position its journal recorded, else its
// `start` option (earliest, latest, or given offsets), checked against the partition's log range.
import type { PartitionWatermarks } from './kafka-client.ts';
import type { KafkaStartSpec } from './kafka-source-types.ts';

/** Each partition's first offset to read, or why the source cannot start. */
export type StartPositions =
  | { readonly from: Map<number, number> }
  | {
      readonly error: string;
      readonly partition: number;
      readonly offset: number;
      /** The position is past the log's end: the source retries (and says why) rather than fails. */
      readonly beyondEnd?: true;
    };

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
      if (stored > m.high) {
        // Only a topic deleted and recreated (or truncated) under the source puts the log's end
        // below a position read from it: reading on would silently skip the new records below it.
        return {
          error: `offset ${stored} of partition ${m.partition} is past the end of topic "${topic}" (the log ends at ${m.high}): the topic was deleted and recreated, or truncated, after the source read it; its records below offset ${stored} would never be read (drop and recreate the source to read the new topic)`,
          partition: m.partition,
          offset: stored,
          beyondEnd: true,
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
