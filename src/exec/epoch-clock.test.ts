// When an epoch reads its clock (engine-epochs.ts, engine-clock.ts): only when something in it depends on
// the value — a journal, a DEFAULT now() column, a temporal filter, a watermark — and otherwise when
// the clock is first asked for, never going back. Counts the clock source's reads, not time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine } from './engine.ts';
import type { EngineJournal } from './api.ts';
import type { ClockSource } from './logical-clock.ts';
import { CANONICAL_DDL } from '../../test/support/canonical-pipeline.ts';

/** A clock that moves one second at each read, and counts them. */
class CountingClock implements ClockSource {
  reads = 0;
  now(): number {
    this.reads++;
    return 1_700_000_000_000_000 + this.reads * 1_000_000;
  }
}

function orders(engine: Engine, n: number): void {
  for (let i = 0; i < n; i++)
    engine.applyChanges('orders', { insert: [{ order_id: i, seller_id: i % 7, amount: i % 13 }] });
}

test('one-row epochs that nothing in reads the clock do not read it; it is read once when asked for', () => {
  const clock = new CountingClock();
  const engine = new Engine({ clock });
  engine.execute(CANONICAL_DDL);
  const before = clock.reads;
  orders(engine, 50);
  assert.equal(clock.reads, before);
  const first = engine.clock;
  assert.equal(clock.reads, before + 1);
  assert.equal(engine.clock, first, 'asked again: the same epoch, the same clock');
  assert.equal(clock.reads, before + 1);
  orders(engine, 3);
  assert.equal(clock.reads, before + 1);
  const second = engine.clock;
  assert.ok(second > first, 'a later epoch, a later clock');
  // A checkpoint records the latest epoch's clock as read then.
  assert.equal(engine.takeCheckpoint(true).clock, second);
  assert.equal(clock.reads, before + 2);
  assert.equal(engine.epoch, 53);
});

test('an epoch reads the clock when it is journaled, or a column default or a temporal filter reads it', () => {
  const journaled = new CountingClock();
  const engine = new Engine({ clock: journaled });
  engine.execute(CANONICAL_DDL);
  const clocks: number[] = [];
  const journal: EngineJournal = {
    appendBatch: (entry) => {
      clocks.push(entry.clock ?? NaN);
      return { orders: { epoch: entry.epoch } };
    },
    appendDdl: () => undefined,
    appendTick: () => undefined,
  };
  engine.setJournal(journal);
  const before = journaled.reads;
  orders(engine, 4);
  assert.equal(journaled.reads, before + 4);
  assert.ok(clocks.every((c, i) => i === 0 || c > (clocks[i - 1] as number)));
  assert.equal(engine.clock, clocks[3]);

  const stamped = new CountingClock();
  const withDefault = new Engine({ clock: stamped });
  withDefault.execute('CREATE TABLE stamped (id integer, at timestamptz NOT NULL DEFAULT now())');
  const stampedBefore = stamped.reads;
  for (let i = 0; i < 3; i++) withDefault.applyChanges('stamped', { insert: [{ id: i }] });
  assert.equal(stamped.reads, stampedBefore + 3);

  const temporal = new CountingClock();
  const withFilter = new Engine({ clock: temporal });
  withFilter.execute(`CREATE TABLE events (id integer, ts timestamptz NOT NULL);
    CREATE MATERIALIZED VIEW recent AS SELECT id FROM events WHERE ts > now() - interval '1 hour'`);
  const temporalBefore = temporal.reads;
  for (let i = 0; i < 3; i++)
    withFilter.applyChanges('events', { insert: [{ id: i, ts: '2023-11-14T22:13:20Z' }] });
  assert.equal(temporal.reads, temporalBefore + 3);
});

test('whether an epoch reads the clock is decided once per change of the tables, views or journal', () => {
  const clock = new CountingClock();
  const engine = new Engine({ clock });
  engine.execute(CANONICAL_DDL);
  const checks = engine.clockChecks;
  orders(engine, 100);
  assert.equal(engine.clockChecks, checks + 1, 'one check for 100 epochs after the DDL');
  engine.execute(`CREATE TABLE events (id integer, ts timestamptz NOT NULL);
    CREATE MATERIALIZED VIEW recent AS SELECT id FROM events WHERE ts > now() - interval '1 hour'`);
  const reads = clock.reads;
  orders(engine, 10);
  assert.equal(engine.clockChecks, checks + 2, 'the new view made the flag stale once');
  assert.equal(clock.reads, reads + 10, 'a temporal filter now reads each epoch’s clock');
  engine.execute('DROP MATERIALIZED VIEW recent');
  orders(engine, 10);
  assert.equal(clock.reads, reads + 10, 'dropped: epochs read no clock again');
  const journal: EngineJournal = {
    appendBatch: (entry) => ({ orders: { epoch: entry.epoch } }),
    appendDdl: () => undefined,
    appendTick: () => undefined,
  };
  engine.setJournal(journal);
  // (the first journaled epoch also settles the previous epoch's unread clock: one read more)
  orders(engine, 5);
  assert.equal(clock.reads, reads + 10 + 6, 'journaled: each epoch reads it');
  engine.setJournal(null);
  orders(engine, 5);
  assert.equal(clock.reads, reads + 16, 'no journal: epochs read no clock again');
  assert.equal(engine.clockChecks, checks + 5);
});
