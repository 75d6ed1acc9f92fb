-- Three inputs joined on one common key: orders, payments and shipments of an order.
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
  PRIMARY KEY (payment_id) NOT ENFORCED
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'debezium-json');

CREATE TABLE shipments (
  shipment_id BIGINT,
  order_id BIGINT,
  carrier STRING
) WITH ('connector' = 'kafka', 'topic' = 'shipments', 'format' = 'json');

SELECT o.order_id, o.amount, p.paid, s.carrier
FROM orders o
JOIN payments p ON p.order_id = o.order_id
LEFT JOIN shipments s ON s.order_id = o.order_id;
