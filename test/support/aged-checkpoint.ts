// What the fingerprint-salt tests share: an engine tracking state changes over a list of DDL, its
// checkpoint as a store hands it back, and that checkpoint aged — its objects carrying the plan
// fingerprints an earlier version gave them — so a load shows which views this version rebuilds.
import { Engine } from '../../src/exec/engine.ts';
import type { StoredCheckpoint } from '../../src/exec/engine-types.ts';
import { MemoryCheckpointStore } from './memory-checkpoint-store.ts';

/** A fresh engine with state tracking on (what checkpoints need), after `ddl`. */
export function trackedEngine(ddl: readonly string[]): Engine {
  const e = new Engine();
  e.setStateTracking(true);
  for (const sql of ddl) e.execute(sql);
  return e;
}

/** The engine's full checkpoint as a store reads it back, and each object's fingerprint in it. */
export function storedCheckpoint(
  engine: Engine,
  full = false,
): {
  readonly checkpoint: StoredCheckpoint;
  readonly fingerprints: Readonly<Record<string, string>>;
} {
  const store = new MemoryCheckpointStore();
  store.write(engine.takeCheckpoint(full));
  const checkpoint = store.read();
  const fingerprints = Object.fromEntries([...checkpoint.objects].map(([name, o]) => [name, o.fingerprint]));
  return { checkpoint, fingerprints };
}

/** `checkpoint` with the objects `before` names carrying those fingerprints (as written before a change). */
export function withFingerprints(
  checkpoint: StoredCheckpoint,
  before: Readonly<Record<string, string>>,
): StoredCheckpoint {
  return {
    ...checkpoint,
    objects: new Map(
      [...checkpoint.objects].map(([name, o]) => [
        name,
        { ...o, fingerprint: before[name] ?? o.fingerprint },
      ]),
    ),
  };
}
