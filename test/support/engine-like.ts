// The slice of Sluice's Engine API the test support code needs, written structurally so the helpers
// stay independent of the engine's module layout (the real `Engine` from src/index.ts satisfies it).
import type {
  ScriptResult,
  StatementResult,
  ViewChangeSet,
  ViewRowError,
  ViewSnapshot,
} from '../../src/exec/api.ts';
import type { Row } from '../../src/common/types.ts';

export interface EngineLike {
  execute(sql: string): StatementResult[];
  executeScript(sql: string): ScriptResult;
  applyChanges(
    table: string,
    changes: { insert?: readonly Row[]; delete?: readonly Row[] },
  ): { accepted: number; epoch: number };
  viewSnapshot(view: string): ViewSnapshot;
  viewErrors(view: string): readonly ViewRowError[];
  tableRows(table: string): readonly Row[];
  subscribe(view: string, listener: (c: ViewChangeSet) => void): () => void;
  readonly epoch: number;
}
