// Which views get a live bar chart: a single numeric key column (a bucket, a band, an id) and at
// least one numeric value column — the Double 11 histogram `total_histogram(bucket, sellers)`.

export interface ColumnLike {
  readonly name: string;
  readonly type: string;
}

export interface ChartSpec {
  /** The category axis: the view's single key column. */
  readonly keyColumn: string;
  /** Numeric non-key columns, most bucket-count-like first; the first is plotted by default. */
  readonly valueColumns: readonly string[];
}

const NUMERIC = /^(smallint|integer|int|bigint|real|double|float|numeric|decimal)/i;

export function isNumericType(type: string): boolean {
  return NUMERIC.test(type.trim());
}

export function pickChart(columns: readonly ColumnLike[], key: readonly string[] | null): ChartSpec | null {
  if (key === null || key.length !== 1) return null;
  const keyColumn = key[0] as string;
  const keyInfo = columns.find((c) => c.name === keyColumn);
  if (keyInfo === undefined || !isNumericType(keyInfo.type)) return null;
  const values = columns.filter((c) => c.name !== keyColumn && isNumericType(c.type)).map((c) => c.name);
  if (values.length === 0) return null;
  return { keyColumn, valueColumns: values };
}
