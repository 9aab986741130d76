// The canonical pipeline of the benchmarks (orders → seller_totals → total_histogram) as tests create
// it: an append-only `orders` table without a key, so a test sees the engine's plainest epoch path.
export const CANONICAL_DDL = `
CREATE TABLE orders (order_id BIGINT, seller_id INT NOT NULL, amount INT NOT NULL);
CREATE MATERIALIZED VIEW seller_totals AS
  SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW total_histogram AS
  SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);
`;
