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
export type { SharedArrangementInfo } from './exec/shared-arrangements.ts';
export { DEFAULT_SQL_LIMITS, REPLAY_SQL_LIMITS } from './common/limits.ts';
export type { SqlLimits } from './common/limits.ts';
export type { StateDelta } from './ivm/state.ts';
export type * from './exec/api.ts';
export { SluiceError, ErrorCodes, httpStatusOf } from './common/errors.ts';
export type { ErrorCode } from './common/errors.ts';
export type { Row, Value, ColumnInfo, SqlType } from './common/types.ts';
