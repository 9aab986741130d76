// Statements replayed from the journal were accepted by the release that journaled them. Where this
// release's binder is stricter than an older one (PostgreSQL's type checks it added: a computed text
// constant no longer adapts to the type beside it, COLLATE on a type without a collation), a replayed
// statement binds under the older rules, so a data directory an older server accepted still starts and
// its views keep the meaning (and the plan fingerprint) their stored state was computed under. Binding
// is synchronous: a depth counter set around one replayed statement is all the state it needs.
//
// A statement journaled since the journal records its rules (BINDING_RULES on its DDL entry) binds
// under those: it was accepted by this release's rules, and one of the older rules changes a meaning,
// not only what is accepted (`bpchar` as a column type was char(1)), so binding it as an older one's
// would restart it as something it was not. A rule made stricter after this gets the next number,
// and its lenient side applies to statements journaled under a lower one.
/** The rules of the journaled statement being bound (0: journaled before they were recorded), or null. */
let journaledRules: number | null = null;

/**
 * The binding rules of this release, recorded on every DDL entry it journals. 1: the rules as of the
 * stamp's introduction (PostgreSQL's `bpchar` column type unlimited, the checks bindsJournaled names).
 * 2: varchar(n) beside varchar(m) is varchar of the longer length, not text (bindsBefore(2) in
 * types-resolve.ts), so it compares with char as PostgreSQL's varchar does.
 */
export const BINDING_RULES = 2;

/**
 * Runs `bind` as a journaled statement accepted under `rules` (absent: journaled before rules were
 * recorded, so under the older, more lenient ones).
 */
export function bindingAsJournaled<T>(bind: () => T, rules?: number): T {
  // Accepted under today's rules: bound by them.
  if (rules !== undefined && rules >= BINDING_RULES) return bind();
  const outer = journaledRules;
  journaledRules = rules ?? 0;
  try {
    return bind();
  } finally {
    journaledRules = outer;
  }
}

/**
 * Whether the statement being bound was journaled before its rules were recorded (bindingAsJournaled):
 * then the older rules apply.
 */
export function bindsJournaled(): boolean {
  return bindsBefore(1);
}

/** Whether the statement being bound was journaled under rules older than `rules` (a meaning they changed). */
export function bindsBefore(rules: number): boolean {
  return journaledRules !== null && journaledRules < rules;
}
