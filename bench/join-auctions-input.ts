// The tables of the join bench's auctions phase and its auctions as the bench's Sluice driver hands
// them over, for the harnesses that time that phase alone (join-auctions-floor.ts, join-auctions-parts.ts).
import type { Row } from '../src/common/types.ts';
import { seededInts } from './arrangement-rows.ts';

export const AUCTION_TABLES_SQL = `
CREATE TABLE auctions (id BIGINT PRIMARY KEY, seller INT NOT NULL, category TEXT NOT NULL);
CREATE TABLE bids (id BIGINT PRIMARY KEY, auction BIGINT NOT NULL, bidder INT NOT NULL, amount INT NOT NULL);
`;

/** `count` auctions as fresh objects, `batch` per epoch, the same every call. */
export function auctionBatches(count: number, batch: number): { insert: Row[]; delete: Row[] }[] {
  const int = seededInts();
  const out: { insert: Row[]; delete: Row[] }[] = [];
  for (let start = 0; start < count; start += batch) {
    const insert: Row[] = [];
    for (let id = start + 1; id <= Math.min(count, start + batch); id++)
      insert.push({ id, seller: 1 + int(10_000), category: `c${String(int(100)).padStart(3, '0')}` });
    out.push({ insert, delete: [] });
  }
  return out;
}
