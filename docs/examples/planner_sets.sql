-- The planner options of the job, set in the file: a mini-batch join (bundles of 4 rows, or every 2 seconds)
-- with state kept for one hour. `converge check` reads them (a --ttl flag would win over the SET) and checks
-- the answer at every bundle end. A SET may stand anywhere before the query.
SET 'table.exec.mini-batch.enabled' = 'true';

CREATE TABLE orders (order_id BIGINT, customer_id INT, PRIMARY KEY (order_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'orders', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE customers (customer_id INT, tier STRING)
  WITH ('connector' = 'kafka', 'topic' = 'customers', 'format' = 'debezium-json');

SET 'table.exec.mini-batch.size' = '4';
SET 'table.exec.mini-batch.allow-latency' = '2 s';
SET 'table.exec.state.ttl' = '1 h';

SELECT o.order_id, c.tier
FROM orders o
LEFT JOIN customers c ON o.customer_id = c.customer_id;
