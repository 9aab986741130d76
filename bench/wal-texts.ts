// The texts one epoch of the server bench's Double 11 run stores (a journal batch of 12 KB, changelog
// entries of 12.3 KB and 6.6 KB, ASCII digits and commas like a stored value list), for the benches
// of the journal file's WAL (wal-autocheckpoint.ts, wal-checkpoint-ab.ts).

/** ASCII digits and commas of length n, like a stored value list. */
function storedText(n: number): string {
  let out = '';
  for (let i = 0; out.length < n; i++) out += `${1_000_000 + i * 7919},`;
  return out.slice(0, n);
}

export const journalText = storedText(12_000);
export const sellerText = storedText(12_300);
export const histogramText = storedText(6_600);
