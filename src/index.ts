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
  EngineOptions,
  ExecuteOptions,
} from './exec/engine.ts';
export { DEFAULT_SQL_LIMITS, REPLAY_SQL_LIMITS } from './limits.ts';
export type { SqlLimits } from './limits.ts';
export type { StateDelta } from './ivm/state.ts';
export type * from './exec/api.ts';
export { SluiceError, ErrorCodes, httpStatusOf } from './errors.ts';
export type { ErrorCode } from './errors.ts';
export type { Row, Value, ColumnInfo, SqlType } from './types.ts';
