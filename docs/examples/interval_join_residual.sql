-- An event-time interval join with a residual condition: a shipment within an hour after its order, and only
-- when the shipment carries less than the order's amount (the residual joins a pair only where it holds).
CREATE TABLE orders (
  order_id BIGINT,
  amount DECIMAL(10, 2),
  order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');

CREATE TABLE shipments (
  shipment_id BIGINT,
  order_id BIGINT,
  shipped DECIMAL(10, 2),
  ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'shipments', 'format' = 'json');

SELECT o.order_id, o.amount, s.shipment_id, s.shipped
FROM orders o
LEFT JOIN shipments s
  ON o.order_id = s.order_id
  AND s.shipped < o.amount
  AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '1' HOUR;
