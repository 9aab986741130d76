// EXPLAIN and ad-hoc SELECT over the engine's state: bound under the statement's limits, a SELECT's
// inputs captured at the current epoch so it can be evaluated in slices while later epochs apply.
import { SluiceError } from '../common/errors.ts';
import type { SqlLimits } from '../common/limits.ts';
import type { SelectStmt } from '../parser/ast.ts';
import { printDataflow } from '../ivm/dataflow-print.ts';
import { lowerToDataflow } from '../ivm/lower.ts';
import { partitionNotes } from './workers/partition-notes.ts';
import type { RowCapture } from '../ivm/row-capture.ts';
import { CapturedArray } from '../ivm/row-capture.ts';
import { bindSelect } from '../planner/bind-select.ts';
import type { Catalog } from '../planner/catalog.ts';
import { printLogicalPlan } from '../planner/logical-plan.ts';
import { planInsertOnly } from '../planner/plan-insert-only.ts';
import { planKey } from '../planner/plan-key.ts';
import type { StatementResult } from './api.ts';
import type { CheckpointedState } from './engine-checkpoints.ts';
import type { EngineReads } from './engine-reads.ts';
import type { ResultLimits } from './result-size.ts';
import { SelectJob } from './select-job.ts';
import { VALUES_INPUT } from './view-runtime.ts';

/** EXPLAIN [DATAFLOW] of a SELECT: its plan as text, one row per line. */
export function explainStatement(
  catalog: Catalog,
  query: SelectStmt,
  dataflow: boolean,
  limits: SqlLimits,
  workers: number,
): StatementResult {
  const bind = (temporalFilters: boolean): ReturnType<typeof bindSelect> =>
    bindSelect(query, catalog, {
      forView: false,
      temporalFilters,
      maxSelectItems: limits.maxSelectItems,
      maxFromRelations: limits.maxFromRelations,
    });
  // The clock conditions a view would run as a TemporalFilter show as one; any other use of the
  // clock (which a view refuses) is explained as the ad-hoc query runs it: the statement's time.
  let bound: ReturnType<typeof bindSelect>;
  try {
    bound = bind(true);
  } catch (error) {
    if (!(error instanceof SluiceError) || error.code !== 'NOT_SUPPORTED') throw error;
    bound = bind(false);
  }
  const lowered = dataflow
    ? lowerToDataflow(
        'query',
        bound.plan,
        bound.key,
        null,
        (p) => planKey(p, catalog),
        (p) => planInsertOnly(p, catalog),
      )
    : null;
  const plan =
    lowered !== null
      ? [printDataflow(lowered), ...partitionNotes(lowered, workers)].join('\n')
      : printLogicalPlan(bound.plan);
  return {
    statement: dataflow ? 'EXPLAIN DATAFLOW' : 'EXPLAIN',
    plan,
    columns: [{ name: 'plan', type: 'text', nullable: false }],
    rows: plan.split('\n').map((line) => ({ plan: line })),
  };
}

/**
 * A plain SELECT bound and its inputs captured at `epoch` (the current one), to be evaluated by the
 * caller in slices (`job.work(deadline)`) while later epochs apply; bounded by `selectLimits`.
 */
export function prepareSelect(
  state: CheckpointedState,
  reads: EngineReads,
  query: SelectStmt,
  limits: SqlLimits,
  epoch: number,
  selectLimits: ResultLimits,
): SelectJob {
  const bound = bindSelect(query, state.catalog, {
    forView: false,
    maxSelectItems: limits.maxSelectItems,
    maxFromRelations: limits.maxFromRelations,
  });
  for (const source of bound.dependsOn) reads.assertNoErrors(source);
  const plan = lowerToDataflow('query', bound.plan, null);
  const inputs = new Map<string, RowCapture>();
  for (const node of plan.nodes) {
    if (node.kind === 'input') inputs.set(node.source, captureOf(state, node.source));
    else if (node.kind === 'values') inputs.set(VALUES_INPUT, new CapturedArray([[]], null, true));
  }
  return new SelectJob(bound, plan, inputs, epoch, selectLimits);
}

function captureOf(state: CheckpointedState, name: string): RowCapture {
  const table = state.tables.get(name);
  if (table !== undefined) return table.capture();
  const view = state.views.get(name);
  if (view !== undefined) return view.output.capture();
  throw new SluiceError('UNKNOWN_TABLE', `relation "${name}" does not exist`);
}
