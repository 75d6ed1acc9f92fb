-- An equality of two time attributes: Flink plans an interval join with bounds [0, 0] (rows of equal time
-- join; a row behind the watermark is late), not a regular join.
CREATE TABLE clicks (user_id BIGINT, url STRING, click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '2' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');
CREATE TABLE views (user_id BIGINT, page STRING, view_time TIMESTAMP(3),
  WATERMARK FOR view_time AS view_time - INTERVAL '2' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'views', 'format' = 'json');

SELECT c.user_id, c.url, v.page
FROM clicks c
JOIN views v ON c.user_id = v.user_id AND c.click_time = v.view_time;
