// The Kafka frame guard: well-formed framing passes however it is split; frames too short to hold a
// correlation id, negative or too large ones are cut with a reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KafkaFrameGuard } from './frame-guard.ts';

test('the frame guard passes Kafka framing and cuts frames too short or too long', () => {
  const frame = (size: number, body = size): Buffer => {
    const b = Buffer.alloc(4 + body);
    b.writeInt32BE(size, 0);
    return b;
  };
  const ok = new KafkaFrameGuard(1000);
  const two = Buffer.concat([frame(8), frame(20)]);
  // Split anywhere, even inside a size header.
  for (let i = 0; i < two.length; i += 3) assert.equal(ok.feed(two.subarray(i, i + 3)), null);
  assert.match(
    new KafkaFrameGuard(1000).feed(Buffer.alloc(4)) ?? '',
    /not the Kafka protocol \(a response frame of 0 bytes/,
  );
  assert.match(new KafkaFrameGuard(1000).feed(frame(-1, 0)) ?? '', /of -1 bytes/);
  assert.match(new KafkaFrameGuard(1000).feed(Buffer.from('HTTP/1.1 400')) ?? '', /1213486160 bytes/);
});
