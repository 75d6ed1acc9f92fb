-- A comma join mixed with an explicit JOIN: the comma's join condition is in WHERE. Flink pushes each WHERE
-- conjunct into the inner join where the tables it names meet, so orders and customers are inner-joined on
-- their customer_id (and the amount filter), then regions; a comma binds looser than JOIN, so the condition
-- of `customers c JOIN regions r` names only c and r. `converge check --plan-only` says where each conjunct went.
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount INT)
  WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'debezium-json');
CREATE TABLE customers (customer_id INT, region_id INT, PRIMARY KEY (customer_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'customers', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE regions (region_id INT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'regions', 'format' = 'json');

SELECT o.order_id, o.amount, r.name
FROM orders o, customers c
JOIN regions r ON r.region_id = c.region_id
WHERE o.customer_id = c.customer_id
  AND o.amount > 10;
