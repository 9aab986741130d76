// The checks of a processing-time temporal join, `l [LEFT] JOIN r FOR SYSTEM_TIME AS OF PROCTIME()
// ON l.k = r.k` (RisingWave's and Flink's lookup join): only INNER and LEFT joins, with at least one
// equality of a left and a right expression (the key the left rows look the right side up by).
import { SluiceError } from '../common/errors.ts';
import type { JoinRef, Pos, TableRef } from '../parser/ast.ts';
import type { LogicalPlan } from './logical-plan.ts';

const HINT = 'write l [LEFT] JOIN r FOR SYSTEM_TIME AS OF PROCTIME() ON l.k = r.k';

/** `FOR SYSTEM_TIME AS OF` on a relation that is not the right side of a JOIN: refused at FOR. */
export function misplacedAsOf(at: Pos): SluiceError {
  return new SluiceError(
    'NOT_SUPPORTED',
    'FOR SYSTEM_TIME AS OF other than on the right side of a JOIN is not supported',
    { position: at, hint: HINT },
  );
}

/** The relation read FOR SYSTEM_TIME AS OF PROCTIME() on the right of `ref`, or null. */
export function temporalSide(ref: JoinRef): (TableRef & { readonly asOfProctime: Pos }) | null {
  const right = ref.right;
  if (right.kind !== 'table' || right.asOfProctime === undefined) return null;
  return right as TableRef & { readonly asOfProctime: Pos };
}

/** Refuses a join kind a temporal join cannot be (before either side is bound). */
export function checkTemporalJoinKind(ref: JoinRef, right: { readonly asOfProctime: Pos }): void {
  if (ref.joinKind === 'inner' || ref.joinKind === 'left') return;
  const what =
    ref.joinKind === 'cross'
      ? 'a temporal join without ON (a cross join or a comma)'
      : `${ref.joinKind.toUpperCase()} JOIN with FOR SYSTEM_TIME AS OF`;
  throw new SluiceError('NOT_SUPPORTED', `${what} is not supported`, {
    position: ref.joinKind === 'cross' ? right.asOfProctime : ref.pos,
    hint: HINT,
  });
}

/** Marks a bound join temporal; one with no equi key is refused at its condition. */
export function temporalJoin(plan: LogicalPlan, ref: JoinRef): LogicalPlan {
  if (plan.kind !== 'join') throw new SluiceError('INTERNAL_ERROR', 'a temporal join bound to no join');
  if (plan.leftKeys.length === 0) {
    throw new SluiceError(
      'NOT_SUPPORTED',
      'a temporal join without an equality of a left and a right expression is not supported',
      { position: ref.on?.pos ?? ref.pos, hint: HINT },
    );
  }
  return { ...plan, temporal: true };
}
