-- A view over one source (a projection with a computed column and a filter) joined to a table.
-- converge reads the view as a Calc in front of the join: `big_orders` is input `o` with the
-- columns id, cust, doubled, whose events are rows of `orders`.
CREATE TABLE orders (
  id BIGINT,
  cust BIGINT,
  amount INT
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'debezium-json');

CREATE TABLE customers (
  id BIGINT,
  name STRING
) WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'json');

CREATE TEMPORARY VIEW big_orders AS
  SELECT id, cust, amount * 2 AS doubled FROM orders WHERE amount > 10;

SELECT o.id, c.name, o.doubled
FROM big_orders AS o
JOIN customers AS c ON o.cust = c.id;
