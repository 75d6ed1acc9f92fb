-- Computed columns in a CREATE TABLE: Flink computes them in the scan's projection, in front of the join.
-- converge reads each table as its physical columns (the rows its events carry) and a Calc that adds
-- the computed ones; the join, its conditions and the SELECT list see every column.
CREATE TABLE orders (
  id BIGINT,
  cust BIGINT,
  amount INT,
  doubled AS amount * 2,
  big AS amount >= 2
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'debezium-json');

CREATE TABLE customers (
  id BIGINT,
  name STRING,
  next_id AS id + 1
) WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'json');

SELECT o.id, c.name, o.doubled
FROM orders AS o
JOIN customers AS c ON o.cust = c.next_id
WHERE o.big;
