// PostgreSQL 15's SQL key words and their categories, as data: the output of
// `SELECT catcode, word FROM pg_get_keywords() ORDER BY catcode, word` on PostgreSQL 15.18 (the table
// "SQL Key Words" in PostgreSQL 15's documentation, appendix C, lists the same words). quote_ident and
// format's %I quote a name that is any key word but an unreserved one, as PostgreSQL's
// quote_identifier does; a word missing here would go out unquoted and change meaning silently.

/** Reserved (catcode R): never a name without quotes (77) */
const RESERVED = `
  all analyse analyze and any array as asc asymmetric both case cast check collate column
  constraint create current_catalog current_date current_role current_time current_timestamp
  current_user default deferrable desc distinct do else end except false fetch for foreign from
  grant group having in initially intersect into lateral leading limit localtime localtimestamp
  not null offset on only or order placing primary references returning select session_user some
  symmetric table then to trailing true union unique user using variadic when where window with
`;

/** Reserved but allowed as a function or type name (catcode T) (23) */
const TYPE_OR_FUNCTION_NAME = `
  authorization binary collation concurrently cross current_schema freeze full ilike inner is
  isnull join left like natural notnull outer overlaps right similar tablesample verbose
`;

/** Unreserved but not allowed as a function or type name (catcode C) (51) */
const COLUMN_NAME = `
  between bigint bit boolean char character coalesce dec decimal exists extract float greatest
  grouping inout int integer interval least national nchar none normalize nullif numeric out
  overlay position precision real row setof smallint substring time timestamp treat trim values
  varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi
  xmlroot xmlserialize xmltable
`;

/** Unreserved (catcode U): a name without quotes (309) */
const UNRESERVED = `
  abort absolute access action add admin after aggregate also alter always asensitive assertion
  assignment at atomic attach attribute backward before begin breadth by cache call called
  cascade cascaded catalog chain characteristics checkpoint class close cluster columns comment
  comments commit committed compression configuration conflict connection constraints content
  continue conversion copy cost csv cube current cursor cycle data database day deallocate
  declare defaults deferred definer delete delimiter delimiters depends depth detach dictionary
  disable discard document domain double drop each enable encoding encrypted enum escape event
  exclude excluding exclusive execute explain expression extension external family filter
  finalize first following force forward function functions generated global granted groups
  handler header hold hour identity if immediate immutable implicit import include including
  increment index indexes inherit inherits inline input insensitive insert instead invoker
  isolation key label language large last leakproof level listen load local location lock locked
  logged mapping match matched materialized maxvalue merge method minute minvalue mode month
  move name names new next nfc nfd nfkc nfkd no normalized nothing notify nowait nulls object of
  off oids old operator option options ordinality others over overriding owned owner parallel
  parameter parser partial partition passing password plans policy preceding prepare prepared
  preserve prior privileges procedural procedure procedures program publication quote range read
  reassign recheck recursive ref referencing refresh reindex relative release rename repeatable
  replace replica reset restart restrict return returns revoke role rollback rollup routine
  routines rows rule savepoint schema schemas scroll search second security sequence sequences
  serializable server session set sets share show simple skip snapshot sql stable standalone
  start statement statistics stdin stdout storage stored strict strip subscription support sysid
  system tables tablespace temp template temporary text ties transaction transform trigger
  truncate trusted type types uescape unbounded uncommitted unencrypted unknown unlisten
  unlogged until update vacuum valid validate validator value varying version view views
  volatile whitespace within without work wrapper write xml year yes zone
`;

export type KeywordCategory = 'reserved' | 'type_func_name' | 'col_name' | 'unreserved';

function words(list: string): string[] {
  return list.split(/\s+/).filter((w) => w !== '');
}

/** Every key word of PostgreSQL 15 → its category. */
export const PG15_KEYWORDS: ReadonlyMap<string, KeywordCategory> = new Map<string, KeywordCategory>([
  ...words(RESERVED).map((w) => [w, 'reserved'] as const),
  ...words(TYPE_OR_FUNCTION_NAME).map((w) => [w, 'type_func_name'] as const),
  ...words(COLUMN_NAME).map((w) => [w, 'col_name'] as const),
  ...words(UNRESERVED).map((w) => [w, 'unreserved'] as const),
]);
