// The Nexmark queries q0–q22 in RisingWave's SQL form (e2e_test/streaming/nexmark/views) and, for the
// windowed ones, Flink's (the nexmark project's queries/*.sql), each with the same query as SQLite
// computes it: windows by integer arithmetic on strftime('%s', …) (as window-tvf-templates.ts does),
// to_char by strftime, the rest as written. Queries Sluice refuses carry the exact refusal instead.
// Every adaptation of the published text is said in `changed`.

/** A query the suite runs: Sluice's SELECT and SQLite's. */
export interface NexmarkQuery {
  readonly name: string;
  readonly sql: string;
  readonly sqlite: string;
  /** What differs from the published text, and why; '' when nothing. */
  readonly changed: string;
}

/** A query Sluice refuses, with the exact error it gives (asserted by the suite). */
export interface RefusedQuery {
  readonly name: string;
  readonly sql: string;
  readonly code: string;
  readonly message: string;
  readonly position: { readonly line: number; readonly column: number };
  readonly why: string;
}

/** SQLite: seconds since the epoch of a timestamp column (whole seconds: windows are whole seconds). */
function epoch(col: string): string {
  return `CAST(strftime('%s', ${col}) AS INTEGER)`;
}

function startSecs(col: string, size: number): string {
  const e = epoch(col);
  return `(${e} - ((${e} % ${size}) + ${size}) % ${size})`;
}

function asTs(secs: string): string {
  return `datetime(${secs}, 'unixepoch')`;
}

/** SQLite: `table`'s `cols` with TUMBLE's window_start / window_end over date_time. */
function tumble(table: string, cols: string, size: number): string {
  const s = startSecs('date_time', size);
  return `(SELECT ${cols}, ${asTs(s)} AS window_start, ${asTs(`${s} + ${size}`)} AS window_end FROM ${table})`;
}

/** SQLite: `table` (columns `b.…`) with HOP's windows over date_time, one row per window. */
function hop(table: string, cols: string, slide: number, size: number): string {
  const k = size / slide;
  const n = Array.from({ length: k }, (_, i) => `SELECT ${i} AS i`).join(' UNION ALL ');
  return (
    `(SELECT ${cols}, ${asTs(`b.l - n.i * ${slide}`)} AS window_start, ${asTs(`b.l - n.i * ${slide} + ${size}`)} AS window_end ` +
    `FROM (SELECT *, ${startSecs('date_time', slide)} AS l FROM ${table} WHERE date_time IS NOT NULL) AS b CROSS JOIN (${n}) AS n)`
  );
}

/**
 * SQLite: Flink's sessions of `table` per `partition` with window functions over epoch milliseconds
 * (a row more than `gap` after the previous one starts a session; exactly `gap` apart merges). The
 * bounds are the session's first time and its last time plus the gap, written as Sluice writes a
 * timestamp (milliseconds without trailing zeros).
 */
function session(table: string, cols: string, partition: string, gapSecs: number): string {
  const gap = gapSecs * 1000;
  const ms = `CAST(ROUND((julianday(date_time) - 2440587.5) * 86400000) AS INTEGER)`;
  const e = `(SELECT *, ${ms} AS e FROM ${table} WHERE date_time IS NOT NULL)`;
  const by = `PARTITION BY ${partition}`;
  const marked = `(SELECT *, CASE WHEN LAG(e) OVER (${by} ORDER BY e) IS NULL OR e - LAG(e) OVER (${by} ORDER BY e) > ${gap} THEN e END AS m FROM ${e})`;
  const started = `(SELECT *, MAX(m) OVER (${by} ORDER BY e) AS s FROM ${marked})`;
  const bounds =
    `(SELECT *, MIN(date_time) OVER (PARTITION BY ${partition}, s) AS first_t, ` +
    `MAX(date_time) OVER (PARTITION BY ${partition}, s) AS last_t FROM ${started})`;
  const end = `rtrim(rtrim(strftime('%Y-%m-%d %H:%M:%f', last_t, '+${gapSecs} seconds'), '0'), '.')`;
  return `(SELECT ${cols}, first_t AS window_start, ${end} AS window_end FROM ${bounds})`;
}

/** PostgreSQL's to_char(date_time, 'HH'): the hour on a 12-hour clock, 01…12. */
const HH12 = `printf('%02d', (CAST(strftime('%H', date_time) AS INTEGER) + 11) % 12 + 1)`;
const YMD = `strftime('%Y-%m-%d', date_time)`;
const HOUR = `CAST(strftime('%H', date_time) AS INTEGER)`;

const RANKS = [
  ['rank1', 'price < 10000'],
  ['rank2', 'price >= 10000 and price < 1000000'],
  ['rank3', 'price >= 1000000'],
] as const;

/** The select list q15 and q16 share (counts of bids, bidders and auctions per price rank). */
const rankCounts = [
  'count(*) AS total_bids',
  ...RANKS.map(([r, c]) => `count(*) filter (where ${c}) AS ${r}_bids`),
  'count(distinct bidder) AS total_bidders',
  ...RANKS.map(([r, c]) => `count(distinct bidder) filter (where ${c}) AS ${r}_bidders`),
  'count(distinct auction) AS total_auctions',
  ...RANKS.map(([r, c]) => `count(distinct auction) filter (where ${c}) AS ${r}_auctions`),
].join(', ');

const q5 = (hopSql: string, starts: string, group: string): string =>
  `SELECT AuctionBids.auction, AuctionBids.num FROM (` +
  `SELECT bid.auction, count(*) AS num, window_start AS starttime FROM ${hopSql} GROUP BY ${starts}window_start, bid.auction` +
  `) AS AuctionBids JOIN (` +
  `SELECT max(CountBids.num) AS maxn, CountBids.starttime_c FROM (` +
  `SELECT count(*) AS num, window_start AS starttime_c FROM ${hopSql} GROUP BY bid.auction, ${group}window_start` +
  `) AS CountBids GROUP BY CountBids.starttime_c` +
  `) AS MaxBids ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`;

const q7 = (tumbleSql: string, lower: string): string =>
  `SELECT B.auction, B.price, B.bidder, B.date_time FROM bid B JOIN (` +
  `SELECT MAX(price) AS maxprice, window_end AS date_time FROM ${tumbleSql} GROUP BY window_end` +
  `) B1 ON B.price = B1.maxprice WHERE B.date_time BETWEEN ${lower} AND B1.date_time`;

const q8 = (person: string, auction: string): string =>
  `SELECT P.id, P.name, P.starttime FROM (` +
  `SELECT id, name, window_start AS starttime, window_end AS endtime FROM ${person} GROUP BY id, name, window_start, window_end` +
  `) P JOIN (` +
  `SELECT seller, window_start AS starttime, window_end AS endtime FROM ${auction} GROUP BY seller, window_start, window_end` +
  `) A ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime`;

const Q4 =
  `SELECT Q.category, AVG(Q.final) as avg FROM (SELECT MAX(B.price) AS final, A.category FROM auction A, bid B ` +
  `WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires GROUP BY A.id, A.category) Q GROUP BY Q.category`;
const Q6 =
  `SELECT Q.seller, AVG(Q.final) OVER (PARTITION BY Q.seller ORDER BY Q.date_time ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) as avg ` +
  `FROM (SELECT ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price) as rank, A.seller, B.price as final, B.date_time ` +
  `FROM auction AS A, bid AS B WHERE A.id = B.auction and B.date_time between A.date_time and A.expires) AS Q WHERE Q.rank <= 1`;
const Q9 =
  `SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, auction, bidder, price, bid_date_time ` +
  `FROM (SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_date_time, ` +
  `ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum ` +
  `FROM auction A, bid B WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires) tmp WHERE rownum <= 1`;
const Q18 =
  `SELECT auction, bidder, price, channel, url, date_time, extra FROM (SELECT *, ROW_NUMBER() OVER (` +
  `PARTITION BY bidder, auction ORDER BY date_time DESC, extra) AS rank_number FROM bid) WHERE rank_number <= 1`;
const Q19 = `SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid) WHERE rank_number <= 10`;
const Q20 =
  `SELECT auction, bidder, price, channel, url, B.date_time as bid_date_time, item_name, description, initial_bid, reserve, ` +
  `A.date_time as auction_date_time, expires, seller, category FROM bid AS B INNER JOIN auction AS A on B.auction = A.id WHERE A.category = 10`;

const q14 = (hour: string, countChar: string, alias: string): string =>
  `SELECT auction, bidder, 0.908 * price as price, CASE ` +
  `WHEN ${hour} >= 8 AND ${hour} <= 18 THEN 'dayTime' ` +
  `WHEN ${hour} <= 6 OR ${hour} >= 20 THEN 'nightTime' ELSE 'otherTime' END AS ${alias}, ` +
  `date_time, ${countChar} AS c_counts FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`;

const Q21 =
  `SELECT auction, bidder, price, channel, CASE WHEN LOWER(channel) = 'apple' THEN '0' WHEN LOWER(channel) = 'google' THEN '1' ` +
  `WHEN LOWER(channel) = 'facebook' THEN '2' WHEN LOWER(channel) = 'baidu' THEN '3' ` +
  `ELSE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] END AS channel_id FROM bid ` +
  `WHERE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] is not null or LOWER(channel) in ('apple', 'google', 'facebook', 'baidu')`;

/** q21 with `regexp_match(url, p)[2]` as `CASE WHEN url ~ p THEN regexp_replace(…) END`. */
const q21 = (matches: string): string => {
  const group2 = `CASE WHEN ${matches} THEN regexp_replace(url, '^.*?(&|^)channel_id=([^&]*).*$', '\\2') END`;
  return (
    `SELECT auction, bidder, price, channel, CASE WHEN LOWER(channel) = 'apple' THEN '0' WHEN LOWER(channel) = 'google' THEN '1' ` +
    `WHEN LOWER(channel) = 'facebook' THEN '2' WHEN LOWER(channel) = 'baidu' THEN '3' ELSE ${group2} END AS channel_id ` +
    `FROM bid WHERE ${group2} is not null or LOWER(channel) in ('apple', 'google', 'facebook', 'baidu')`
  );
};

const same = (name: string, sql: string, changed = ''): NexmarkQuery => ({ name, sql, sqlite: sql, changed });

/** count_char, RisingWave's JavaScript UDF in q14, as a Sluice SQL function (created by the suite). */
export const COUNT_CHAR_FUNCTION = `CREATE FUNCTION count_char(s varchar, c varchar) RETURNS int LANGUAGE SQL RETURN length(s) - length(replace(s, c, ''))`;

export const NEXMARK_QUERIES: readonly NexmarkQuery[] = [
  same('q0', `SELECT auction, bidder, price, date_time FROM bid`),
  same('q1', `SELECT auction, bidder, 0.908 * price as price, date_time FROM bid`),
  same(
    'q2',
    `SELECT auction, price FROM bid WHERE auction = 1007 OR auction = 1020 OR auction = 2001 OR auction = 2019 OR auction = 2087`,
  ),
  same(
    'q3',
    `SELECT P.name, P.city, P.state, A.id FROM auction AS A INNER JOIN person AS P on A.seller = P.id ` +
      `WHERE A.category = 10 and (P.state = 'or' OR P.state = 'id' OR P.state = 'ca')`,
  ),
  same('q4', Q4),
  {
    name: 'q5',
    sql: q5(`HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)`, '', ''),
    sqlite: q5(`${hop('bid', 'b.auction', 2, 10)} AS bid`, '', ''),
    changed: '',
  },
  same('q6', Q6, 'RisingWave’s q6_group_top1 (there is no q6 without it)'),
  {
    name: 'q7',
    sql: q7(`TUMBLE(bid, date_time, INTERVAL '10' SECOND)`, `B1.date_time - INTERVAL '10' SECOND`),
    sqlite: q7(tumble('bid', 'price', 10), `datetime(B1.date_time, '-10 seconds')`),
    changed: '',
  },
  {
    name: 'q8',
    sql: q8(
      `TUMBLE(person, date_time, INTERVAL '10' SECOND)`,
      `TUMBLE(auction, date_time, INTERVAL '10' SECOND)`,
    ),
    sqlite: q8(tumble('person', 'id, name', 10), tumble('auction', 'seller', 10)),
    changed: '',
  },
  same('q9', Q9),
  {
    name: 'q10',
    sql: `SELECT auction, bidder, price, date_time, TO_CHAR(date_time, 'YYYY-MM-DD') as date, TO_CHAR(date_time, 'HH:MI') as time FROM bid`,
    sqlite: `SELECT auction, bidder, price, date_time, ${YMD} as date, ${HH12} || ':' || strftime('%M', date_time) as time FROM bid`,
    changed: 'reads date_time where RisingWave’s text says dateTime (its bid table has date_time)',
  },
  {
    // Not in RisingWave's suite (its SESSION windows came later); Flink's q11 as a SESSION table function.
    name: 'q11',
    sql:
      `SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime ` +
      `FROM SESSION(bid PARTITION BY bidder, date_time, INTERVAL '10' SECOND) GROUP BY bidder, window_start, window_end`,
    sqlite:
      `SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime ` +
      `FROM ${session('bid', 'bidder', 'bidder', 10)} GROUP BY bidder, window_start, window_end`,
    changed:
      'RisingWave has no q11; Flink’s GROUP BY SESSION(…) group window (refused, see q11_flink) written as the SESSION table function',
  },
  {
    // q13 as a plain join: Flink joins each bid with the side input as of its processing time.
    name: 'q13_join',
    sql: `SELECT B.auction, B.bidder, B.price, B.date_time, S.value FROM bid B JOIN side_input S ON B.auction % 10000 = S.key`,
    sqlite: `SELECT B.auction, B.bidder, B.price, B.date_time, S.value FROM bid B JOIN side_input S ON B.auction % 10000 = S.key`,
    changed:
      'Flink’s q13 is a processing-time lookup join (run as published: NEXMARK_Q13); this is the regular join over a side_input table, mod() written %',
  },
  {
    name: 'q14',
    sql: q14('extract(hour from date_time)', `count_char(extra, 'c')`, 'bidTimeType'),
    // SQLite keeps an unquoted alias's case; PostgreSQL (and Sluice) fold it to lowercase.
    sqlite: q14(HOUR, `length(extra) - length(replace(extra, 'c', ''))`, 'bidtimetype'),
    changed: 'count_char, a JavaScript UDF in RisingWave, is a SQL function (COUNT_CHAR_FUNCTION)',
  },
  {
    name: 'q15',
    sql: `SELECT to_char(date_time, 'YYYY-MM-DD') as "day", ${rankCounts} FROM bid GROUP BY to_char(date_time, 'YYYY-MM-DD')`,
    sqlite: `SELECT ${YMD} as "day", ${rankCounts} FROM bid GROUP BY ${YMD}`,
    changed: '',
  },
  {
    name: 'q16',
    sql:
      `SELECT channel, to_char(date_time, 'YYYY-MM-DD') as "day", max(to_char(date_time, 'HH:mm')) as "minute", ${rankCounts} ` +
      `FROM bid GROUP BY channel, to_char(date_time, 'YYYY-MM-DD')`,
    // PostgreSQL's 'HH:mm' is the 12-hour clock hour and the MONTH (mm is MM, not minutes as in Flink).
    sqlite: `SELECT channel, ${YMD} as "day", max(${HH12} || ':' || strftime('%m', date_time)) as "minute", ${rankCounts} FROM bid GROUP BY channel, ${YMD}`,
    changed: '',
  },
  {
    name: 'q17',
    sql:
      `SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day, count(*) AS total_bids, ` +
      RANKS.map(([r, c]) => `count(*) filter (where ${c}) AS ${r}_bids, `).join('') +
      `min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price ` +
      `FROM bid GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')`,
    sqlite:
      `SELECT auction, ${YMD} AS day, count(*) AS total_bids, ` +
      RANKS.map(([r, c]) => `count(*) filter (where ${c}) AS ${r}_bids, `).join('') +
      `min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price ` +
      `FROM bid GROUP BY auction, ${YMD}`,
    changed: '',
  },
  same('q18', Q18),
  same('q19', Q19),
  same('q20', Q20),
  {
    name: 'q22',
    sql: `SELECT auction, bidder, price, channel, split_part(url, '/', 4) as dir1, split_part(url, '/', 5) as dir2, split_part(url, '/', 6) as dir3 FROM bid`,
    // SQLite has no split_part: the suite registers one (PostgreSQL's: 1-based, '' past the end).
    sqlite: `SELECT auction, bidder, price, channel, split_part(url, '/', 4) as dir1, split_part(url, '/', 5) as dir2, split_part(url, '/', 6) as dir3 FROM bid`,
    changed: '',
  },
  {
    // q21 as published: (regexp_match(url, p))[2]; SQLite has no arrays, so its side is the
    // regexp_replace rewrite below (the group where the pattern matches)
    name: 'q21',
    sql: Q21,
    sqlite: q21(`url REGEXP '(&|^)channel_id=([^&]*)'`),
    changed:
      'none in Sluice; SQLite runs CASE WHEN url REGEXP p THEN regexp_replace(url, ^.*?p.*$, \\2) END for the subscript',
  },
  {
    // q21 without arrays: regexp_match(…)[2] as regexp_replace of the whole url by its second
    // group, where the pattern matches (kept: the form users wrote before arrays).
    name: 'q21_no_array',
    sql: q21(`url ~ '(&|^)channel_id=([^&]*)'`),
    sqlite: q21(`url REGEXP '(&|^)channel_id=([^&]*)'`),
    changed:
      'regexp_match(url, p)[2] written CASE WHEN url ~ p THEN regexp_replace(url, ^.*?p.*$, \\2) END; SQLite’s REGEXP and regexp_replace are registered by the suite',
  },
  // Flink's forms of the windowed queries (TABLE(…(TABLE t, DESCRIPTOR(ts), …)), window_end grouped too).
  {
    name: 'q5_flink',
    sql: q5(
      `TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))`,
      'window_end, ',
      'window_end, ',
    ),
    sqlite: q5(`${hop('bid', 'b.auction', 2, 10)} AS bid`, 'window_end, ', 'window_end, '),
    changed:
      'Flink’s q5 groups by window_start and window_end and joins on both; here the same with RisingWave’s column names (its starttime/endtime)',
  },
  {
    name: 'q7_flink',
    sql: q7(
      `TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))`,
      `B1.date_time - INTERVAL '10' SECOND`,
    ),
    sqlite: q7(tumble('bid', 'price', 10), `datetime(B1.date_time, '-10 seconds')`),
    changed: 'the Flink spelling of TUMBLE; column names as RisingWave’s (date_time, not dateTime)',
  },
  {
    name: 'q8_flink',
    sql: q8(
      `TABLE(TUMBLE(TABLE person, DESCRIPTOR(date_time), INTERVAL '10' SECOND))`,
      `TABLE(TUMBLE(TABLE auction, DESCRIPTOR(date_time), INTERVAL '10' SECOND))`,
    ),
    sqlite: q8(tumble('person', 'id, name', 10), tumble('auction', 'seller', 10)),
    changed: 'the Flink spelling of TUMBLE; column names as RisingWave’s',
  },
  {
    name: 'q11_session_tvf_flink',
    sql:
      `SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime ` +
      `FROM TABLE(SESSION(TABLE bid PARTITION BY (bidder), DESCRIPTOR(date_time), INTERVAL '10' SECOND)) GROUP BY bidder, window_start, window_end`,
    sqlite:
      `SELECT bidder, count(*) as bid_count, window_start AS starttime, window_end AS endtime ` +
      `FROM ${session('bid', 'bidder', 'bidder', 10)} GROUP BY bidder, window_start, window_end`,
    changed: 'Flink 1.19’s SESSION table function in place of the legacy group window of Flink’s q11',
  },
];

/** The side input of q13 (Flink's: a small keyed table of values). */
export const SIDE_INPUT_TABLE = {
  name: 'side_input',
  columns: [
    { name: 'key', sqlType: 'bigint', nullable: false },
    { name: 'value', sqlType: 'varchar', nullable: true },
  ],
  primaryKey: ['key'],
} as const;

/**
 * q13 as RisingWave publishes it: a processing-time temporal join, each bid joined with the side
 * input as it is when the bid arrives. SQLite cannot express it: the suite compares it with a model
 * (support/temporal-join-model.ts), and its ad-hoc form (one epoch: the plain join) with SQLite.
 */
export const NEXMARK_Q13 = {
  name: 'q13',
  sql: `SELECT B.auction, B.bidder, B.price, B.date_time, S.value FROM bid B JOIN side_input FOR SYSTEM_TIME AS OF PROCTIME() S ON mod(B.auction, 10000) = S.key`,
  adHocSqlite: `SELECT B.auction, B.bidder, B.price, B.date_time, S.value FROM bid B JOIN side_input S ON B.auction % 10000 = S.key`,
} as const;

/** The queries (and published forms) Sluice refuses, with the exact refusal. */
export const NEXMARK_REFUSED: readonly RefusedQuery[] = [
  {
    name: 'q12',
    sql:
      `SELECT B.bidder, count(*) as bid_count, window_start, window_end ` +
      `FROM TUMBLE((SELECT *, NOW() as p_time FROM bid), p_time, INTERVAL '10' SECOND) B GROUP BY B.bidder, window_start, window_end`,
    code: 'NOT_SUPPORTED',
    message: 'NOW() in a materialized view is not supported',
    position: { line: 1, column: 121 },
    why: 'NOW() read per row in a view; processing time is a column DEFAULT now() (golden/processing-time.slt runs q12 so)',
  },
  {
    name: 'q12_flink',
    sql:
      `SELECT B.bidder, count(*) as bid_count, TUMBLE_START(B.p_time, INTERVAL '10' SECOND) as starttime, ` +
      `TUMBLE_END(B.p_time, INTERVAL '10' SECOND) as endtime FROM (SELECT *, PROCTIME() as p_time FROM bid) B ` +
      `GROUP BY B.bidder, TUMBLE(B.p_time, INTERVAL '10' SECOND)`,
    code: 'UNKNOWN_FUNCTION',
    message: 'function proctime() does not exist',
    position: { line: 1, column: 208 },
    why: 'PROCTIME() does not exist',
  },
  {
    name: 'q11_flink',
    sql:
      `SELECT B.bidder, count(*) as bid_count, SESSION_START(B.date_time, INTERVAL '10' SECOND) as starttime, ` +
      `SESSION_END(B.date_time, INTERVAL '10' SECOND) as endtime FROM bid B GROUP BY B.bidder, SESSION(B.date_time, INTERVAL '10' SECOND)`,
    code: 'UNKNOWN_FUNCTION',
    message: 'function session(timestamp, interval) does not exist',
    position: { line: 1, column: 230 },
    why: 'Flink’s legacy group window functions',
  },
  {
    name: 'q13_flink',
    sql:
      `SELECT B.auction, B.bidder, B.price, B.date_time, S.value FROM (SELECT *, PROCTIME() as p_time FROM bid) B ` +
      `JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON mod(B.auction, 10000) = S.key`,
    code: 'NOT_SUPPORTED',
    message: 'FOR SYSTEM_TIME AS OF an expression other than PROCTIME() is not supported',
    position: { line: 1, column: 184 },
    why: 'Flink’s q13 reads the processing time from a PROCTIME() column; RisingWave’s AS OF PROCTIME() runs (NEXMARK_Q13)',
  },
];
