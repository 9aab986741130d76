// Statements replayed from the journal were accepted by the release that journaled them. Where this
// release's binder is stricter than an older one (PostgreSQL's type checks it added: a computed text
// constant no longer adapts to the type beside it, COLLATE on a type without a collation), a replayed
// statement binds under the older rules, so a data directory an older server accepted still starts and
// its views keep the meaning (and the plan fingerprint) their stored state was computed under. Binding
// is synchronous: a depth counter set around one replayed statement is all the state it needs.
let journaledDepth = 0;

/** Runs `bind` with the older, more lenient rules of journaled statements. */
export function bindingAsJournaled<T>(bind: () => T): T {
  journaledDepth++;
  try {
    return bind();
  } finally {
    journaledDepth--;
  }
}

/** Whether the statement being bound is a journaled one (bindingAsJournaled). */
export function bindsJournaled(): boolean {
  return journaledDepth > 0;
}
