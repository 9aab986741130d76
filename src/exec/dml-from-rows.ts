// UPDATE … FROM and DELETE … USING: the statement's query (dml-query.ts) joins the table to the
// FROM list, so a table row comes out once for each FROM row (or combination of them) it matches.
// Each table row is written once, as in PostgreSQL. Where PostgreSQL would set a row to whichever
// of several different new values its join met first, Sluice refuses the statement: the choice
// would follow the join's order, which nothing fixes, and an answer must not depend on it.
import { SluiceError } from '../common/errors.ts';
import type { Pos } from '../parser/ast.ts';
import type { Value } from '../common/types.ts';
import { bigintAsText, encodeExactValues, encodeValues } from '../common/values.ts';
import { changedSinceRead } from './dml-query.ts';
import type { TableStore } from './table-store.ts';

type Rows = readonly (readonly Value[])[];

/**
 * The table rows the query's joined rows name, each once, with its new row (UPDATE) in step; a
 * keyless table's row as many times as the table holds it (every copy matched alike). `inserts`:
 * the new row made from each joined row (UPDATE), null for DELETE. `readAt`: the epoch the query
 * read the table at; a keyless table written since is refused (its copy counts may have changed;
 * a keyed table's rows are checked one by one by the caller).
 */
export function onePerTableRow(
  table: TableStore,
  joined: Rows,
  inserts: readonly Value[][] | null,
  readAt: number,
  from: Pos,
): { matched: Rows; inserts: Value[][] } {
  const pk = table.def.primaryKey;
  if (pk === null && table.changedAt > readAt) throw changedSinceRead(inserts === null ? 'DELETE' : 'UPDATE');
  // By the row's identity (its key, or a keyless row's values): where it came first, its new row's
  // exact encoding.
  const seen = new Map<string, { at: number; next: string | null }>();
  const matched: (readonly Value[])[] = [];
  const out: Value[][] = [];
  for (let r = 0; r < joined.length; r++) {
    const row = joined[r] as readonly Value[];
    const id = pk === null ? encodeExactValues(row) : encodeValues(row, pk);
    const next = inserts === null ? null : encodeExactValues(inserts[r] as Value[]);
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, { at: r, next });
      const copies = pk === null ? table.copiesOf(row) : 1;
      for (let c = 0; c < copies; c++) {
        matched.push(row);
        if (inserts !== null) out.push(c === 0 ? (inserts[r] as Value[]) : [...(inserts[r] as Value[])]);
      }
    } else if (first.next !== next) throw ambiguous(table, row, from);
  }
  return { matched, inserts: out };
}

function ambiguous(table: TableStore, row: readonly Value[], from: Pos): SluiceError {
  return new SluiceError(
    'CARDINALITY_VIOLATION',
    `UPDATE … FROM would set a row of table "${table.def.name}" to more than one new value: it matches several FROM rows that give different values`,
    {
      position: from,
      detail: `the row: ${JSON.stringify(table.toRow(row), bigintAsText)}; nothing was changed`,
      hint: 'make the FROM list and WHERE match at most one row for each row updated (for example, aggregate the FROM side in a subquery), or give the matches the same values',
    },
  );
}
