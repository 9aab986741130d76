// The SQL editor's history of executed statements, kept in the browser's localStorage: newest
// first, an entry run again moves to the front, and it is bounded (entries, characters per entry,
// characters in all) so a pasted megabyte cannot fill the storage. DOM-free: the storage is passed in.

/** The part of the Web Storage API the history uses (localStorage in the browser). */
export interface HistoryStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export const HISTORY_KEY = 'sluice.console.history';
export const HISTORY_LIMITS = {
  /** Most statements kept. */
  entries: 50,
  /** A longer text is run but not kept: recalling a truncated statement would run another one. */
  entryChars: 20_000,
  /** All entries together; the oldest go first. */
  totalChars: 200_000,
} as const;

export class StatementHistory {
  private list: string[] = [];

  constructor(
    private readonly storage: HistoryStorage | null,
    private readonly limits: { entries: number; entryChars: number; totalChars: number } = HISTORY_LIMITS,
  ) {
    this.list = this.load();
  }

  /** Newest first. */
  entries(): readonly string[] {
    return this.list;
  }

  /** Records an executed text (trimmed); false when it was empty or too long to keep. */
  add(sql: string): boolean {
    const text = sql.trim();
    if (text === '' || text.length > this.limits.entryChars) return false;
    // Another tab may have added entries since this page loaded: start from what is stored.
    const current = this.load();
    this.list = bound([text, ...current.filter((e) => e !== text)], this.limits);
    try {
      this.storage?.setItem(HISTORY_KEY, JSON.stringify(this.list));
    } catch {
      // Storage full or disabled (private mode): the history lives on in this page only.
    }
    return true;
  }

  private load(): string[] {
    let raw: string | null = null;
    try {
      raw = this.storage?.getItem(HISTORY_KEY) ?? null;
    } catch {
      return this.list;
    }
    if (raw === null) return this.list;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return [];
    }
    if (!Array.isArray(parsed)) return [];
    const texts = parsed.filter((e): e is string => typeof e === 'string' && e.trim() !== '');
    return bound(
      texts.filter((e, i) => e.length <= this.limits.entryChars && texts.indexOf(e) === i),
      this.limits,
    );
  }
}

function bound(list: readonly string[], limits: { entries: number; totalChars: number }): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const e of list) {
    if (out.length >= limits.entries || chars + e.length > limits.totalChars) break;
    out.push(e);
    chars += e.length;
  }
  return out;
}

/**
 * Walking the history from the editor, as a shell does: `older` first saves the text being edited
 * (the draft), `newer` past the newest entry gives the draft back. Any other edit ends the walk.
 */
export class HistoryWalk {
  private index = -1;
  private draft = '';

  constructor(private readonly history: StatementHistory) {}

  /** The next older entry, or null at the oldest (nothing changes). */
  older(current: string): string | null {
    const list = this.history.entries();
    if (this.index + 1 >= list.length) return null;
    if (this.index === -1) this.draft = current;
    this.index += 1;
    return list[this.index] ?? null;
  }

  /** The next newer entry, the draft after the newest, or null when not walking. */
  newer(): string | null {
    if (this.index === -1) return null;
    this.index -= 1;
    return this.index === -1 ? this.draft : (this.history.entries()[this.index] ?? null);
  }

  reset(): void {
    this.index = -1;
  }
}
