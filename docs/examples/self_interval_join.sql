-- An interval join of a table with itself: each login followed by a login of the same user from another device
-- within 2 seconds (LEFT: a login with none is kept, padded with NULLs). converge reads `logins` as one stream that
-- inputs `a` and `b` both read (their `source`): Flink scans the table once, and each record and watermark reaches
-- both inputs of the interval join (converge hands a record to the left input first).
CREATE TABLE logins (
  user_id BIGINT,
  device STRING,
  login_time TIMESTAMP(3),
  WATERMARK FOR login_time AS login_time - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'logins', 'format' = 'json');

SELECT a.user_id, a.device, a.login_time, b.device AS next_device, b.login_time AS next_time
FROM logins a
LEFT JOIN logins b
  ON a.user_id = b.user_id
  AND a.device <> b.device
  AND a.login_time BETWEEN b.login_time - INTERVAL '2' SECOND AND b.login_time;
