// The "Double 11" example from MISSION.md: the demo creates it, the console offers it as an example.
export const DEMO_SQL = `CREATE TABLE IF NOT EXISTS orders (
  order_id BIGINT NOT NULL,
  seller_id INTEGER NOT NULL,
  amount INTEGER NOT NULL,
  PRIMARY KEY (order_id)
);
CREATE MATERIALIZED VIEW IF NOT EXISTS seller_totals AS
  SELECT seller_id, SUM(amount) AS total FROM orders GROUP BY seller_id;
CREATE MATERIALIZED VIEW IF NOT EXISTS total_histogram AS
  SELECT FLOOR(total / 10) AS bucket, COUNT(*) AS sellers FROM seller_totals GROUP BY FLOOR(total / 10);`;
