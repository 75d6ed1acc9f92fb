-- An interval join whose lower bound is above its upper bound: valid SQL, but no time difference lies in the
-- window. Flink plans no join (every order comes out padded with NULLs as it arrives, late ones too), and so
-- does converge.
CREATE TABLE orders (order_id BIGINT, order_time TIMESTAMP(3),
  WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');
CREATE TABLE shipments (order_id BIGINT, ship_time TIMESTAMP(3),
  WATERMARK FOR ship_time AS ship_time - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'shipments', 'format' = 'json');

SELECT o.order_id, s.ship_time
FROM orders o
LEFT JOIN shipments s
  ON o.order_id = s.order_id
  AND s.ship_time BETWEEN o.order_time + INTERVAL '3' SECOND AND o.order_time + INTERVAL '1' SECOND;
