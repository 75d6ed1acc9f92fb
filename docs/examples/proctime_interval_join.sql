-- A processing-time interval join, its time attributes computed columns `AS PROCTIME()` (the form of Flink's own
-- interval-join tests): each row's time is the wall clock at its arrival, so converge joins clicks to the
-- impressions of the same ad that arrived from 5 s before to 2 s after them, and a click with none is padded.
CREATE TABLE clicks (
  click_id BIGINT, ad_id INT, cost DECIMAL(10, 2),
  pt AS PROCTIME()
) WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');
CREATE TABLE impressions (
  imp_id BIGINT, ad_id INT, slot STRING,
  pt AS PROCTIME()
) WITH ('connector' = 'kafka', 'topic' = 'impressions', 'format' = 'json');

SELECT c.click_id, c.cost, i.imp_id, i.slot
FROM clicks c
LEFT JOIN impressions i
  ON c.ad_id = i.ad_id AND i.slot <> 'footer'
  AND c.pt BETWEEN i.pt - INTERVAL '2' SECOND AND i.pt + INTERVAL '5' SECOND;
