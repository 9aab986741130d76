// Rewrites a stored checkpoint as an upgrade that plans a view differently leaves it: the view's
// plan fingerprint changed, the header's checksum kept whole, so no older tree is needed to test
// what recovery does with it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type MetaRow, metaChecksum, parseObjects } from '../../src/storage/checkpoint-format.ts';

/** Gives view `view` another plan fingerprint in the stored checkpoint, keeping the header whole. */
export function changeStoredPlan(dataDir: string, view: string): void {
  const db = new Database(join(dataDir, 'checkpoint.db'));
  try {
    const meta = db.prepare('SELECT * FROM checkpoint_meta WHERE id = 1').get() as MetaRow;
    const objects = parseObjects(meta.objects).map((o) =>
      o.name === view ? { ...o, fingerprint: `${o.fingerprint}-planned-otherwise` } : o,
    );
    assert.ok(
      objects.some((o) => o.name === view),
      `the checkpoint holds view ${view}`,
    );
    const changed: MetaRow = { ...meta, objects: JSON.stringify(objects) };
    changed.checksum = metaChecksum(changed);
    db.prepare('UPDATE checkpoint_meta SET objects = ?, checksum = ? WHERE id = 1').run(
      changed.objects,
      changed.checksum,
    );
  } finally {
    db.close();
  }
}
