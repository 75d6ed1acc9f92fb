-- An event-time interval join: a shipment within an hour after its order (the watermark allows 5 seconds of disorder).
CREATE TABLE orders (
  order_id BIGINT,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TABLE shipments (
  shipment_id BIGINT,
  order_id BIGINT,
  ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'shipments', 'format' = 'json');

SELECT o.order_id, o.amount, s.shipment_id, s.ship_time
FROM orders o
LEFT JOIN shipments s
  ON o.order_id = s.order_id
  AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '1' HOUR;
