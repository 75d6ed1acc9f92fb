-- A LEFT join with a residual condition between an upsert table and a retract (CDC) table.
CREATE TABLE orders (
  order_id BIGINT,
  customer_id INT,
  amount DECIMAL(10, 2),
  PRIMARY KEY (order_id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'topic' = 'orders', 'key.format' = 'json', 'value.format' = 'json');

CREATE TABLE payments (
  payment_id BIGINT,
  order_id BIGINT,
  paid DECIMAL(10, 2),
  method STRING
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'debezium-json');

SELECT o.order_id, o.amount, p.payment_id, p.paid, p.method
FROM orders AS o
LEFT JOIN payments AS p
  ON o.order_id = p.order_id AND p.paid >= o.amount;
