// Checkpoint entries made as they are read: an array of `length` elements whose element i is
// `entry(i)`, built on access and never stored. A checkpoint of a million rows is then taken in
// one cheap synchronous call and its entries are built across the writer's slices (taking them all
// at once had stalled the server for about half a second). The caller guarantees that what `entry`
// reads does not change afterwards (rows are never changed in place: a snapshot of references is
// the state of its moment).
export function lazyEntries(
  length: number,
  entry: (i: number) => readonly [string, unknown],
): readonly (readonly [string, unknown])[] {
  // An empty target whose `length` the traps report: setting a million-element length on an array
  // allocates its whole (holey) backing store, 8 bytes an element.
  const target: (readonly [string, unknown])[] = [];
  const index = (prop: string | symbol): number => {
    if (typeof prop !== 'string') return -1;
    const i = arrayIndex(prop);
    return i < length ? i : -1;
  };
  // Every element is present to the array methods (map, forEach, spread and deepEqual ask `has`
  // and for descriptors, not only `get`); nothing is stored.
  return new Proxy(target, {
    get: (t, prop, receiver): unknown => {
      if (prop === 'length') return length;
      const i = index(prop);
      return i === -1 ? Reflect.get(t, prop, receiver) : entry(i);
    },
    has: (t, prop): boolean => index(prop) !== -1 || Reflect.has(t, prop),
    getOwnPropertyDescriptor: (t, prop): PropertyDescriptor | undefined => {
      const i = index(prop);
      if (i === -1) {
        const own = Reflect.getOwnPropertyDescriptor(t, prop);
        return prop === 'length' && own !== undefined ? { ...own, value: length } : own;
      }
      return { value: entry(i), writable: false, enumerable: true, configurable: true };
    },
    ownKeys: (t): (string | symbol)[] => [
      ...Array.from({ length }, (_, i) => String(i)),
      ...Reflect.ownKeys(t),
    ],
  });
}

/** The array index a property name spells (canonical, below 2^32 - 1), or -1. */
function arrayIndex(prop: string): number {
  const c = prop.charCodeAt(0);
  if (c < 48 || c > 57) return -1;
  const n = Number(prop);
  return Number.isInteger(n) && n < 4294967295 && String(n) === prop ? n : -1;
}
