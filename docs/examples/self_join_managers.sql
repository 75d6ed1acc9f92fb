-- A self-join: each employee with their manager's name, both read from one table.
-- converge reads `emp` as one stream that inputs `e` and `m` both read (their `source`):
-- Flink scans the table once and each change reaches both sides of the join.
CREATE TABLE emp (
  id BIGINT,
  boss BIGINT,
  name STRING
) WITH ('connector' = 'kafka', 'topic' = 'emp', 'format' = 'debezium-json');

SELECT e.name, m.name AS boss_name
FROM emp AS e
LEFT JOIN emp AS m ON e.boss = m.id;
