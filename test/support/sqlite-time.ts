// The SQLite spelling of the date/time forms the random workload generates (random-workload.ts,
// `dateInt`), so the oracle computes them with SQLite's own date functions — an independent
// implementation — rather than ours. Each PostgreSQL form is generated only with the operands
// these patterns expect (a column name or a quoted literal), so a plain textual rewrite is exact:
//   (c + INTERVAL 'N days|hours')          → datetime(c, '±N days|hours')
//   (CAST(a AS DATE) - CAST(b AS DATE))     → CAST(julianday(date(a)) - julianday(date(b)) AS INTEGER)
//   (CAST(c AS DATE) + N)                   → date(c, '±N days')
//   date_part('unit', x)                    → CAST(strftime('%…', x) AS INTEGER)

const OPERAND = String.raw`(\w+|'[^']*')`;
const STRFTIME: Record<string, string> = {
  year: '%Y',
  month: '%m',
  day: '%d',
  hour: '%H',
  dow: '%w',
  doy: '%j',
};

function signed(n: string): string {
  return n.startsWith('-') ? n : `+${n}`;
}

export function sqliteTimeSql(sql: string): string {
  if (!sql.includes('INTERVAL') && !sql.includes('AS DATE') && !sql.includes('date_part(')) return sql;
  return sql
    .replace(
      /\((\w+) \+ INTERVAL '(-?\d+) (days|hours)'\)/g,
      (_m, c: string, n: string, unit: string) => `datetime(${c}, '${signed(n)} ${unit}')`,
    )
    .replace(
      new RegExp(String.raw`\(CAST\(${OPERAND} AS DATE\) - CAST\(${OPERAND} AS DATE\)\)`, 'g'),
      (_m, a: string, b: string) => `CAST(julianday(date(${a})) - julianday(date(${b})) AS INTEGER)`,
    )
    .replace(
      new RegExp(String.raw`\(CAST\(${OPERAND} AS DATE\) \+ (-?\d+)\)`, 'g'),
      (_m, c: string, n: string) => `date(${c}, '${signed(n)} days')`,
    )
    .replace(
      /date_part\('(\w+)', ((?:datetime|date)\(\w+, '[^']*'\)|\w+)\)/g,
      (_m, unit: string, x: string) => `CAST(strftime('${STRFTIME[unit] ?? '?'}', ${x}) AS INTEGER)`,
    );
}
