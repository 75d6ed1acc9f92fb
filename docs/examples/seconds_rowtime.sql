-- An event-time interval join whose rowtime comes from epoch seconds: `ts AS TO_TIMESTAMP_LTZ(epoch_s, 0)` is
-- epoch_s * 1000 milliseconds (NULL outside the years 0000-9999, a NULL rowtime Flink's job fails on), computed in
-- a Calc in front of the join; the other side parses its rowtime from text.
CREATE TABLE readings (
  sensor INT, reading DOUBLE, epoch_s BIGINT,
  ts AS TO_TIMESTAMP_LTZ(epoch_s, 0),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'readings', 'format' = 'json');
CREATE TABLE alarms (
  sensor INT, level STRING, raised_at STRING,
  ts AS TO_TIMESTAMP(raised_at, 'yyyy-MM-dd HH:mm:ss'),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'alarms', 'format' = 'json');

SELECT a.sensor, a.level, r.reading
FROM alarms a
RIGHT JOIN readings r
  ON a.sensor = r.sensor
  AND r.ts BETWEEN a.ts - INTERVAL '2' SECOND AND a.ts + INTERVAL '2' SECOND;
