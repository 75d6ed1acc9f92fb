-- An event-time interval join over computed time attributes, declared as Flink's own interval-join tests declare
-- them: the rowtime is `TO_TIMESTAMP_LTZ(ms, 3)` of an epoch-millisecond BIGINT, and `sku AS item` only renames.
-- converge holds a TIMESTAMP_LTZ(3) as its epoch milliseconds, so these columns compute nothing: the input is the
-- physical columns, `ms` its time column, and no Calc sits in front of the join.
CREATE TABLE orders (
  order_id BIGINT, item STRING, ms BIGINT, qty INT,
  sku AS item,
  order_time AS TO_TIMESTAMP_LTZ(ms, 3),
  WATERMARK FOR order_time AS order_time - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'orders', 'format' = 'json');
CREATE TABLE stock (
  item STRING, ms BIGINT, level INT,
  sku AS item,
  checked AS TO_TIMESTAMP_LTZ(ms, 3),
  WATERMARK FOR checked AS checked - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'stock', 'format' = 'json');

SELECT o.order_id, o.sku, o.order_time, s.level
FROM orders o
LEFT JOIN stock s
  ON o.sku = s.sku AND s.level < o.qty
  AND o.order_time BETWEEN s.checked AND s.checked + INTERVAL '3' SECOND;
