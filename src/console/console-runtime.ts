// What the console's server side reads of a tenant's runtime: its views' names, its committed epoch,
// and a view's plan, node counts and EXPLAIN text. The server's runtime has all of these, so the
// console names no server module: the server registers the console, never the other way round.
import type { Engine } from '../exec/engine.ts';

export interface ConsoleRuntime {
  readonly committedEpoch: number;
  viewNames(): readonly string[];
  readonly engine: Pick<Engine, 'viewPlan' | 'viewNodeStats' | 'explainView'>;
}
