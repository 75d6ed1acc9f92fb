-- An event-time interval join whose rowtimes are parsed from text, as JSON sources often carry them:
-- `ts AS TO_TIMESTAMP(s)` (and `CAST(s AS TIMESTAMP(3))`) compute the time attribute in the scan's Calc, before the
-- watermark assigner. converge's engine computes it per row in a Calc in front of the join, its DuckDB oracle the
-- same in SQL, and the generators write each drawn time as its text 'yyyy-MM-dd HH:mm:ss.SSS'.
CREATE TABLE clicks (
  user_id BIGINT, page STRING, click_time STRING,
  ts AS TO_TIMESTAMP(click_time),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');
CREATE TABLE purchases (
  user_id BIGINT, amount INT, bought_at STRING,
  ts AS CAST(bought_at AS TIMESTAMP(3)),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'purchases', 'format' = 'json');

SELECT c.user_id, c.page, c.ts, p.amount
FROM clicks c
LEFT JOIN purchases p
  ON c.user_id = p.user_id AND p.amount > 10
  AND p.ts BETWEEN c.ts AND c.ts + INTERVAL '5' SECOND;
