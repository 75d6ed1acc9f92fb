-- IS NOT TRUE in a join condition: three-valued logic, so a NULL comparison (UNKNOWN) is NOT TRUE and joins,
-- where a plain NOT would not.
CREATE TABLE bids (item BIGINT, price INT) WITH ('connector' = 'kafka', 'topic' = 'bids', 'format' = 'json');
CREATE TABLE limits (item BIGINT, max_price INT)
  WITH ('connector' = 'kafka', 'topic' = 'limits', 'format' = 'debezium-json');

SELECT b.item, b.price, l.max_price
FROM bids b
JOIN limits l ON b.item = l.item AND (b.price > l.max_price) IS NOT TRUE;
