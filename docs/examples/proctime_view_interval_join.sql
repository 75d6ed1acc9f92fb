-- A view in front of a processing-time interval join (the form of Flink's own interval-join tests): the view
-- turns an ad id of 0 into NULL and keeps only paid clicks, and passes the PROCTIME() attribute on unchanged, so
-- the join after it is still an interval join on each row's arrival. A view that computed on `pt` would make it
-- a plain timestamp (Flink materializes it), which converge refuses.
CREATE TABLE raw_clicks (
  click_id BIGINT, ad_id INT, cost DECIMAL(10, 2),
  pt AS PROCTIME()
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');
CREATE TABLE impressions (
  imp_id BIGINT, ad_id INT, slot STRING,
  pt AS PROCTIME()
) WITH ('connector' = 'kafka', 'topic' = 'impressions', 'format' = 'json');
CREATE TEMPORARY VIEW clicks AS
  SELECT click_id, IF(ad_id = 0, CAST(NULL AS INT), ad_id) AS ad_id, pt
  FROM raw_clicks
  WHERE cost > 0;

SELECT c.click_id, i.imp_id, i.slot
FROM clicks c
JOIN impressions i
  ON c.ad_id = i.ad_id
  AND c.pt BETWEEN i.pt - INTERVAL '1' SECOND AND i.pt + INTERVAL '4' SECOND;
