-- A derived table in a LEFT join (a renamed and a computed column, a filter) and a WHERE after the join.
CREATE TABLE customers (
  id BIGINT,
  name STRING
) WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'json');

CREATE TABLE orders (
  id BIGINT,
  cust BIGINT,
  amount INT
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'debezium-json');

SELECT o.id, c.name, o.amt
FROM customers AS c
LEFT JOIN (SELECT t.id, t.cust AS customer, amount + 1 AS amt FROM orders AS t WHERE t.amount IS NOT NULL) AS o
  ON o.customer = c.id
WHERE o.amt > 3 OR o.amt IS NULL;
