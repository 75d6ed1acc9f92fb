-- A comma join: the join conditions are in WHERE. Flink pushes each conjunct into the inner join where the
-- tables it names meet, so this is orders JOIN customers ON ... JOIN regions ON ...; `converge check
-- --plan-only` says where each conjunct went.
CREATE TABLE orders (order_id BIGINT, customer_id INT, amount INT)
  WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'debezium-json');
CREATE TABLE customers (customer_id INT, region_id INT, PRIMARY KEY (customer_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'customers', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE regions (region_id INT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'regions', 'format' = 'json');

SELECT o.order_id, o.amount, r.name
FROM orders o, customers c, regions r
WHERE o.customer_id = c.customer_id
  AND c.region_id = r.region_id
  AND o.amount > 10;
