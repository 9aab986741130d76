// An in-memory stand-in for the SQLite checkpoint store, shared by the engine's checkpoint tests:
// applies each checkpoint's deltas (replaceAll, deletes, upserts) and passes every value through the
// store's codec, so a restore sees what a real store would hand back.
import type { EngineCheckpoint, StoredCheckpoint } from '../../src/exec/engine.ts';
import { decodeStored as decodeValue, encodeStored as encodeValue } from '../../src/common/json-codec.ts';

/** An in-memory stand-in for the SQLite checkpoint store: applies deltas, values through its codec. */
export class MemoryCheckpointStore {
  private epoch = 0;
  private positions = {};
  private clock: number | undefined;
  private readonly objects = new Map<
    string,
    { fingerprint: string; parts: Map<string, Map<string, string>> }
  >();

  write(cp: EngineCheckpoint): void {
    const live = new Set(cp.objects.map((o) => o.name));
    for (const name of [...this.objects.keys()]) if (!live.has(name)) this.objects.delete(name);
    for (const o of cp.objects) {
      let obj = this.objects.get(o.name);
      if (obj === undefined || obj.fingerprint !== o.fingerprint) {
        obj = { fingerprint: o.fingerprint, parts: new Map() };
        this.objects.set(o.name, obj);
      }
      for (const p of o.parts) {
        let entries = obj.parts.get(p.stateId);
        if (entries === undefined || p.delta.replaceAll) {
          entries = new Map();
          obj.parts.set(p.stateId, entries);
        }
        for (const k of p.delta.deletes) entries.delete(k);
        for (const [k, v] of p.delta.upserts) entries.set(k, encodeValue(v));
      }
    }
    this.epoch = cp.epoch;
    this.positions = cp.positions;
    this.clock = cp.clock;
  }

  read(): StoredCheckpoint {
    return {
      epoch: this.epoch,
      positions: this.positions,
      ...(this.clock !== undefined ? { clock: this.clock } : {}),
      objects: new Map(
        [...this.objects].map(([name, o]) => [
          name,
          {
            fingerprint: o.fingerprint,
            parts: new Map([...o.parts].map(([id, entries]) => [id, [...entries.values()].map(decodeValue)])),
          },
        ]),
      ),
    };
  }
}
