// Approximate state bytes without walking every entry: read by every catalog listing and metrics
// scrape, so past a sample it measures the first entries and scales to the whole count.

/** Entries measured before the estimate extrapolates. */
const SAMPLE = 4096;

/** `bytesOf` summed over the first SAMPLE of `entries`, scaled to `total` entries. */
export function sampledSize(
  entries: Iterable<number>,
  total: number,
  bytesOf: (entry: number) => number,
): number {
  let bytes = 0;
  let measured = 0;
  for (const entry of entries) {
    bytes += bytesOf(entry);
    if (++measured === SAMPLE) break;
  }
  return measured === 0 ? 0 : Math.round((bytes / measured) * total);
}
