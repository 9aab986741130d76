// Code generated per column list (the changelog's encoders and byte writers), found first by the
// list's array — the engine hands every change set of a view one array per definition, so an epoch
// builds no text to find its encoder — then by the names' text, so equal lists in different arrays
// share one. Views rarely change their columns; the text map is bounded anyway (emptied when full).

export class ColumnListCache<T> {
  private readonly byArray = new WeakMap<readonly string[], { readonly value: T }>();
  private readonly byText = new Map<string, { readonly value: T }>();

  constructor(
    private readonly make: (columns: readonly string[]) => T,
    private readonly maxTexts = 512,
  ) {}

  get(columns: readonly string[]): T {
    let entry = this.byArray.get(columns);
    if (entry === undefined) {
      const text = JSON.stringify(columns);
      entry = this.byText.get(text);
      if (entry === undefined) {
        if (this.byText.size >= this.maxTexts) this.byText.clear();
        entry = { value: this.make(columns) };
        this.byText.set(text, entry);
      }
      this.byArray.set(columns, entry);
    }
    return entry.value;
  }
}
