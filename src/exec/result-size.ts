// Result bounds shared by paged view reads and ad-hoc SELECT: an estimate of a row's JSON size
// (cheap, no encoding; a little above the real size for typical rows) and the error past a bound.
import { SluiceError } from '../common/errors.ts';
import type { Value } from '../common/types.ts';

export interface ResultLimits {
  /** Most rows one result may hold. */
  readonly maxRows: number;
  /** Most bytes (estimated JSON) one result may hold. */
  readonly maxBytes: number;
}

/** Bytes of one column's `"name":` and separator. */
export function columnOverheads(names: readonly string[]): number[] {
  return names.map((n) => n.length + 4);
}

/** The approximate size of `{"a":1,...}` for a row given as values in column order. */
export function rowJsonBytes(values: readonly Value[], overheads: readonly number[]): number {
  let n = 2;
  for (let i = 0; i < overheads.length; i++) {
    const v = values[i] as Value;
    n += overheads[i] as number;
    switch (typeof v) {
      case 'string':
        n += v.length + 2;
        break;
      case 'number':
        n += 12;
        break;
      case 'bigint':
        n += 22;
        break;
      case 'boolean':
        n += 5;
        break;
      case 'object':
        // a decimal, an interval or a jsonb value: written as its text (a decimal may have thousands
        // of digits; a jsonb value is its JSON text, a little shorter than the estimate's quotes)
        n += v === null ? 4 : v.toString().length + 2;
        break;
      default:
        n += 4;
    }
  }
  return n;
}

export function resultTooLarge(what: string, limits: ResultLimits, hint: string): SluiceError {
  return new SluiceError(
    'RESULT_TOO_LARGE',
    `${what} is larger than the result limit of ${limits.maxRows} rows or ${limits.maxBytes} bytes`,
    { hint },
  );
}
