// One stateful part's changed checkpoint entries, as plain data: what operators and table stores
// export (src/ivm/state.ts) and the checkpoint store writes (src/storage/checkpoint-store.ts).
// Values are plain JSON-able data except for bigint, which the stored codec handles.

export interface StateDelta {
  /** Replace every stored entry of this state (a new operator, or a change of representation). */
  readonly replaceAll: boolean;
  readonly upserts: readonly (readonly [string, unknown])[];
  readonly deletes: readonly string[];
}
