-- The job as it runs in production: RocksDB, parallelism 2, and an upsert sink keyed by the order.
SET 'state.backend.type' = 'rocksdb';
SET 'parallelism.default' = '2';

CREATE TABLE orders (
  order_id BIGINT,
  amount BIGINT,
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'topic' = 'orders', 'key.format' = 'json', 'value.format' = 'json');

CREATE TABLE payments (
  payment_id BIGINT,
  order_id BIGINT,
  method STRING,
  PRIMARY KEY (payment_id) NOT ENFORCED
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'debezium-json');

CREATE TABLE paid_orders (
  id BIGINT,
  amount BIGINT,
  payment BIGINT,
  method STRING,
  PRIMARY KEY (id, payment) NOT ENFORCED
) WITH ('connector' = 'jdbc', 'table-name' = 'paid_orders');

INSERT INTO paid_orders
SELECT o.order_id, o.amount, p.payment_id, p.method
FROM orders AS o
JOIN payments AS p ON o.order_id = p.order_id;
