-- A derived table that computes with CASE, IF and widening CASTs: Flink runs it as a Calc in front of the join, one change
-- at a time; converge reads it as the input's projection (docs/scenario-format.md, "Views").
CREATE TABLE orders (
  id BIGINT,
  cust BIGINT,
  amount INT
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TABLE customers (
  id BIGINT,
  tier INT
) WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'json');

SELECT o.id, o.size_class, o.paid, o.amount_big, o.amount_dbl, c.tier
FROM (
  SELECT id, cust,
         CASE WHEN amount >= 100 THEN 2 WHEN amount >= 10 THEN 1 ELSE 0 END AS size_class,
         IF(amount > 0, amount, 0) AS paid,
         CAST(amount AS INT) AS amount_int, CAST(amount AS BIGINT) AS amount_big, CAST(amount AS DOUBLE) AS amount_dbl
  FROM orders
) AS o
JOIN customers AS c ON o.cust = c.id;
