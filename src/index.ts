// Sluice's library entry point: the engine and the types its API speaks.
export { Engine } from './exec/engine.ts';
export type {
  EngineJournal,
  TableInfo,
  ViewInfo,
  ApplyOptions,
  EngineCheckpoint,
  ObjectCheckpoint,
  StoredCheckpoint,
} from './exec/engine.ts';
export type { StateDelta } from './ivm/state.ts';
export type * from './exec/api.ts';
export { SluiceError, ErrorCodes, httpStatusOf } from './errors.ts';
export type { ErrorCode } from './errors.ts';
export type { Row, Value, ColumnInfo, SqlType } from './types.ts';
