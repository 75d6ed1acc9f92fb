-- NOT IN (SELECT ...): Flink plans it as a null-aware anti join (FlinkSubQueryRemoveRule). An order is kept
-- when no return names it, and when no return is left after the subquery's WHERE; a return with a NULL order
-- id drops every order (`o.order_id <> NULL` is never TRUE), as does an order whose own id is NULL once any
-- return exists. NOT EXISTS with an equality would keep those; converge reads the condition Flink uses.
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount DECIMAL(10, 2))
  WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');
CREATE TABLE customers (customer_id INT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'json');
CREATE TABLE returns (return_id BIGINT, order_id BIGINT, reason STRING)
  WITH ('connector' = 'kafka', 'topic' = 'returns', 'format' = 'json');

SELECT o.order_id, o.amount, c.name
FROM orders o
JOIN customers c ON o.customer_id = c.customer_id
WHERE o.order_id NOT IN (SELECT r.order_id FROM returns r WHERE r.reason <> 'mistake');
